"""Type analysis of memory: does a load/store/memcpy move floats, integers or pointers?

Sources, in order: the IR type of the access, the `!tbaa` / `!tbaa.struct` tags clang
emits at -O1+ ("double", "float", "int", "any pointer", ...), then the other accesses
through pointers with the same roots. Adjoints differ by element type (the "memcpy
problem": 8 bytes of doubles vs 2 floats vs a pointer), so an access to active memory
whose element type cannot be decided is an error naming the instruction.
"""
from __future__ import annotations

import re

from ..errors import EnzymeBuildError
from ..ir.model import named_type_body, is_active_type, is_float_type, make_name, merged_values, take_type, tbaa_type
from .activity import pointer_as_integer, pointer_roots  # noqa: F401  (re-exported)
from .memtypes import caller_range_kinds, copy_kinds, range_kinds, range_words, word_kinds
from .library import STRING_CREATE, STRING_CREATE_DEFINED, STRING_TBAA_TYPES, math_integer_operand

_FLOATISH = {"double": "double", "float": "float"}


def _kind_of_tbaa(name: str | None) -> str | None:
    if name is None:
        return None
    if name in _FLOATISH:
        return _FLOATISH[name]
    if name == "any pointer":
        return "pointer"
    if name in ("int", "long", "long long", "short", "char", "omnipotent char", "bool", "_Bool"):
        return "int" if name != "omnipotent char" else None
    return None


def check_memory_access(gen, inst) -> None:
    """Reject loads/stores of active memory the engine cannot differentiate correctly."""
    ptr = inst.operands[0][1] if inst.opcode == "load" else inst.operands[1][1]
    if not gen.act.has_shadow(ptr):
        return
    value = inst.result if inst.opcode == "load" else inst.operands[0][1]
    if value in gen.views:
        return
    check_integer_copy(gen, inst)
    check_packed_floats(gen.fn, gen.engine.module, inst, gen.engine.location(inst))
    ty = inst.type
    if is_float_type(ty) or ty == "ptr":
        return
    if "double" in ty or "float" in ty:
        raise EnzymeBuildError(
            f"vector/aggregate access '{ty}' to active memory in @{gen.fn.name} is not supported",
            location=gen.engine.location(inst),
            hint="the pre-AD pipeline disables vectorization; avoid whole-struct copies of float data")
    kind = _kind_of_tbaa(tbaa_type(gen.engine.module, inst.metadata.get("!tbaa")))
    if kind in ("double", "float"):
        raise EnzymeBuildError(
            f"integer-typed {inst.opcode} of {kind} data in @{gen.fn.name} is not supported "
            f"({inst.text.strip()})", location=gen.engine.location(inst),
            hint="copy floating-point fields one by one instead of through integers")


def _tbaa_struct_kinds(module, tag: str | None) -> list[str | None]:
    node = module.metadata.get(tag or "", "")
    return [_kind_of_tbaa(tbaa_type(module, m)) for m in re.findall(r'(![0-9]+)', node)]


def _tbaa_struct_words(module, tag: str | None, nbytes: int) -> list[str] | None:
    """The kind of each 8-byte word of a copy whose `!tbaa.struct` (offset, size, tag
    triples: clang's own statement of the copied fields) lays out every word as one double,
    pointer or integer field; None otherwise."""
    node = module.metadata.get(tag or "", "")
    triples = re.findall(r'i64 (\d+), i64 (\d+), (![0-9]+)', node)
    if not triples or nbytes % 8:
        return None
    words: list[str | None] = [None] * (nbytes // 8)
    for off, size, t in triples:
        off, size = int(off), int(size)
        kind = _kind_of_tbaa(tbaa_type(module, t))
        if kind not in ("double", "pointer", "int") or off % 8 or off + size > nbytes \
                or (kind != "int" and size != 8) or size > 8 or words[off // 8] not in (None, kind):
            return None
        words[off // 8] = kind
    return words if all(words) else None


def memcpy_element_kind(gen, inst, pointers=None) -> str:
    """'double' | 'float' | 'pointer' | 'int' for what a memcpy/memmove (or the realloc of
    `pointers`) of active memory copies; 'record' for a memcpy of records mixing float
    types and integers whose type `memcpy_record_type` knows."""
    module = gen.engine.module
    tagged = _tbaa_struct_kinds(module, inst.metadata.get("!tbaa.struct"))
    kinds = set(tagged) - {None}
    n = inst.operands[2][1] if len(inst.operands) > 2 and pointers is None else ""
    exact: set[str] | None = None     # the memory type analysis at exactly the copied bytes

    def at_copied_bytes() -> set[str]:
        nonlocal exact
        if exact is None:
            exact = range_kinds(module, gen.fn, [inst.operands[0][1], inst.operands[1][1]], int(n))
        return exact

    if (not kinds or None in tagged) and n.isdigit():
        # a constant-length copy: the memory type analysis at exactly the copied bytes
        # (an evaluator's 16-byte dimensions inside a struct that also holds doubles and
        # pointers copy only integers); also when some fields are tagged only as `char`
        # (a union member, `struct {int tag; union {double d; long i;} u;}`: the tag alone
        # said "int", and the double's adjoint was not moved)
        kinds |= at_copied_bytes()
    if not kinds and n.isdigit() and pointers is None:
        # nothing known at the copied bytes here: what the callers know at exactly those bytes
        # of the memory they pass, however many wrapper constructors up
        kinds = caller_range_kinds(module, gen.fn, [inst.operands[0][1], inst.operands[1][1]], int(n))
    if not kinds:
        kinds = _kinds_through_roots(gen, pointers or [inst.operands[0][1], inst.operands[1][1]])
    if not kinds:
        # untyped copies of a function's pointer arguments (-O0 std::copy ends in a memmove in
        # a helper that never touches the data): decide from how the callers use that memory
        kinds = _kinds_from_callers(module, gen.fn, pointers or [inst.operands[0][1], inst.operands[1][1]])
    if kinds and "pointer" in kinds and not kinds & {"double", "float"} and not n.isdigit():
        # a run-time length over a block the function's own accesses see only pointers (and
        # integers) in: the fuller analysis (pointers kept in the block, callers, links) may
        # see its floats too (a header `{long n; double *w;}` with the doubles after it in the
        # same block, copied whole: genann_copy). Taken for pointers, the doubles' adjoints
        # were dropped, silently
        kinds |= range_kinds(module, gen.fn, pointers or [inst.operands[0][1], inst.operands[1][1]],
                             None) & {"double", "float"}
    if not kinds:
        # the memory type analysis: accesses at the copied offsets (every offset of a
        # realloc'd block), across copies, calls and pointers kept in memory
        kinds = range_kinds(module, gen.fn, pointers or [inst.operands[0][1], inst.operands[1][1]],
                            int(n) if n.isdigit() else None)
    if n.isdigit() and "int" in kinds and "pointer" not in kinds and kinds & {"double", "float"} \
            and "pointer" in at_copied_bytes():
        # an integer field that holds a pointer (`uintptr_t at` beside `double w`, tagged
        # `long`): its shadow must move with it, it is not an integer to drop
        kinds.add("pointer")
    if len(kinds) > 1 and "int" in kinds and kinds - {"int"} <= {"double", "float"}:
        # floats beside integers: a record whose layout is known moves each float's adjoint
        # where it is; taken as a run of floats, a packed record's doubles (at offsets 20 and
        # 28 of `#pragma pack(4) {double; int, int, int; double, double; bool}`) straddle the
        # words the run adds, which is a byte move only while the source's adjoints are zero:
        # copied twice from the same record, the gradient was wrong
        if pointers is None and n.isdigit() and not _union_copy_unknown(gen, inst) \
                and memcpy_record_type(gen, inst) is not None:
            return "record"
        if pointers is None and n.isdigit() and _misaligned_floats(gen, inst, int(n)):
            raise EnzymeBuildError(
                f"cannot differentiate a copy of a packed record in @{gen.fn.name} ({inst.text.strip()}): its "
                f"floating-point fields are not at multiples of their size from the copy's start, and neither "
                f"a type tag nor a declared type lays the record out", location=gen.engine.location(inst),
                hint="drop `#pragma pack` / `__attribute__((packed))` from the differentiated type, or copy "
                     "its fields explicitly")
        kinds.discard("int")
    if pointers is None and kinds - {"int"} and _union_copy_unknown(gen, inst):
        raise EnzymeBuildError(
            f"cannot differentiate a copy of a union in @{gen.fn.name} ({inst.text.strip()}): the memory "
            f"type analysis knows some of its words as {'/'.join(sorted(kinds))}, not what the others hold, and "
            f"a floating-point value among them would lose its derivative", location=gen.engine.location(inst),
            hint="build with optimization (-O1 or higher) and without ENZYME_BUILD_AD_BEFORE_OPT (the library's "
                 "copies are then inlined where the union's contents are known), or keep the differentiated values "
                 "out of the union (a std::function's lambda capturing them by reference instead of by value)")
    if kinds == {"int", "pointer"}:
        # a record of integers and pointers (`*frame1 = *frame` of {int lo, hi; float *data}):
        # copied as pointers, the shadow's bytes along (its integer bytes mean nothing)
        kinds = {"pointer"}
    if len(kinds) == 1:
        return kinds.pop()
    if not kinds and pointers is None:
        declared = declared_element_types(gen, inst)
        if len(declared) == 1 and next(iter(declared)) in ("double", "float"):
            return declared.pop()
    if pointers is None and memcpy_record_type(gen, inst, with_pointers="pointer" in kinds):
        return "record"
    if pointers is None and not n.isdigit() and _string_inline_copy(gen, inst):
        return "int"   # a short string's characters, next to doubles and pointers
    if pointers is None and _string_buffer_fill(gen.fn, inst.operands[0][1]):
        return "int"   # characters into a new string's buffer (a struct's, a vector element's)
    if pointers is None and any(string_characters(module, gen.fn, inst.operands[k][1]) for k in (0, 1)):
        return "int"   # one string's characters into another's (assigning strings: std::sort's moves)
    if not kinds and pointers is None:
        # the pointers' own C types, as clang's pointer type tags spell them (`double *` loaded
        # from a std::vector<double>'s `_M_start`: "p1 double"), when nothing else says
        pointee = _pointee_kinds(module, gen.fn, [inst.operands[0][1], inst.operands[1][1]])
        if len(pointee) == 1:
            return pointee.pop()
    if pointers is None and _constant_text(module, inst.operands[1][1]):
        return "int"   # characters of a constant string (sprintf of a literal, strcpy of a message)
    what = "mixed " + "/".join(sorted(kinds)) if kinds else "data of unknown type"
    # clang's type tags exist at -O1 and up: their root names the C/C++ type system
    tagged = any(" TBAA\"" in node for node in gen.engine.module.metadata.values())
    raise EnzymeBuildError(
        f"cannot differentiate a memcpy of {what} in @{gen.fn.name} ({inst.text.strip()})",
        location=gen.engine.location(inst),
        hint="copy the fields explicitly, or build with -O1 or higher so clang emits type tags" if not tagged else
             "copy the fields explicitly: neither the type tags nor the accesses around the copy say what its bytes "
             "hold (with ENZYME_BUILD_AD_BEFORE_OPT=1 a library's copy stays in a helper of its own; built without "
             "it, the copy is usually inlined where its type is known)")


# the scalar a "p1 T" pointer type tag points to, as a copy's element kind
_POINTEE_KINDS = {"double": "double", "float": "float", "int": "int", "long": "int", "long long": "int",
                  "short": "int", "unsigned int": "int", "unsigned long": "int", "unsigned long long": "int"}


def _pointee_kinds(module, fn, pointers) -> set[str]:
    """Element kinds the pointers' C types give: each pointer followed back through GEPs,
    phis and selects to the loads it comes from, and each load's pointer type tag (clang
    tags a pointer access with its pointee: "p1 double" for a `double *` field, "p2 double"
    for `double **`). Characters and `void *` say nothing (byte buffers hold anything)."""
    kinds: set[str] = set()
    seen: set[str] = set()
    work = list(pointers)

    def tagged(inst) -> None:
        node = module.metadata.get(inst.metadata.get("!tbaa") or "", "")
        m = re.match(r'!\{![0-9]+,\s*(![0-9]+)', node)
        acc = re.match(r'!\{!"p(\d+) ([^"]*)"', module.metadata.get(m.group(1), "")) if m else None
        if acc is not None and int(acc.group(1)) > 1:
            kinds.add("pointer")
        elif acc is not None and acc.group(2) in _POINTEE_KINDS:
            kinds.add(_POINTEE_KINDS[acc.group(2)])

    users = fn.users()
    while work:
        v = work.pop()
        if v in seen:
            continue
        seen.add(v)
        for u in users.get(v, ()):    # stored as a pointer of a known type (a new vector's storage)
            if u.opcode == "store" and u.operands[0] == ("ptr", v):
                tagged(u)
        d = fn.defs.get(v)
        if d is None:
            continue
        if d.opcode == "getelementptr" and d.operands:
            work.append(d.operands[0][1])
        elif d.opcode in ("phi", "select"):
            work += merged_values(fn, v)
        elif d.opcode == "load" and d.type == "ptr":
            tagged(d)
    return kinds


def _constant_text(module, v: str) -> bool:
    """Whether `v` points into a constant global holding a string (`@.str = constant [16 x
    i8] c"input too small\00"`) or an array of 8-bit integers: characters, whatever memory
    they are copied into (clang turns `sprintf(buf, "literal")` and `strcpy` of a literal
    into such a memcpy)."""
    m = re.match(r'(?:getelementptr\s+(?:inbounds\s+|nuw\s+|nusw\s+)*\(\s*i8\s*,\s*ptr\s+)?'
                 r'@("[^"]*"|[-a-zA-Z$._0-9]+)', v.strip())
    line = module.globals.get(m.group(1).strip('"')) if m else None
    if line is None or not re.search(r'\bconstant\s+\[\d+ x i8\]', line):
        return False
    init = line.split(" = ", 1)[1]
    return bool(re.search(r'\[\d+ x i8\]\s+(c"|zeroinitializer|\[)', init))


# libstdc++'s std::string: {char *data; size_t size; char inline buffer[16]}; a string whose
# characters fit the buffer has data == &buffer (the small-string optimization)
_STRING_INLINE_OFFSET, _STRING_INLINE_BYTES = 16, 16


def _inline_string_owners(fn, p: str) -> set[str]:
    """The pointers to the string object whose inline buffer `p` is: `getelementptr i8, ptr X,
    i64 16 + k` is the buffer of the string at `X + k` (k = 0: X itself; k > 0: a string
    member after other fields) when the program says so: it stores p (or the same address
    computed again) into the string's data field or compares it with what that field holds.
    Without that, offset 16 of a block is just offset 16: a C header `{size_t n, dim;}`
    followed by the doubles a memcpy fills was taken for a string's characters, and the
    copy's derivative dropped."""
    d = fn.defs.get(p)
    if d is None or d.opcode != "getelementptr" or d.source_type != "i8" or len(d.operands) != 2:
        return set()
    base, off = d.operands[0][1], d.operands[1][1]
    if not off.isdigit() or int(off) < _STRING_INLINE_OFFSET:
        return set()
    field = str(int(off) - _STRING_INLINE_OFFSET)
    geps = [g for g in fn.of_opcode("getelementptr") if g.source_type == "i8" and len(g.operands) == 2
            and g.operands[0][1] == base]
    owners = {g.result for g in geps if g.operands[1][1] == field} | ({base} if field == "0" else set())
    same = {g.result for g in geps if g.operands[1][1] == off} | {p}
    users = fn.users()
    for q in same:
        for user in users.get(q, ()):
            if user.opcode == "store" and user.operands[0][1] == q and user.operands[1][1] in owners:
                return owners
            if user.opcode == "icmp":
                other = user.operands[1][1] if user.operands[0][1] == q else user.operands[0][1]
                load = fn.defs.get(other)
                if load is not None and load.opcode == "load" and load.operands[0][1] in owners:
                    return owners
    return set()


def _inline_string_buffer(fn, p: str) -> str | None:
    """A pointer to the string object whose inline buffer `p` is (`_inline_string_owners`)."""
    owners = _inline_string_owners(fn, p)
    return min(owners) if owners else None


def _string_inline_copy(gen, inst) -> bool:
    """A memcpy of a std::string's characters out of its inline buffer (moving or copying a
    short string into a struct, a vector element or a map node): the source's buffer is
    compared with its data pointer (the copy runs only when they are equal, so at most 16
    bytes move), and those bytes hold no float or pointer."""
    fn, module = gen.fn, gen.engine.module
    s = inst.operands[1][1]
    owners = _inline_string_owners(fn, s)
    if not owners:
        return False
    guarded = False
    for i in fn.of_opcode("icmp"):
        if i.predicate in ("eq", "ne") and s in (i.operands[0][1], i.operands[1][1]):
            other = i.operands[1][1] if i.operands[0][1] == s else i.operands[0][1]
            load = fn.defs.get(other)
            guarded |= load is not None and load.opcode == "load" and load.operands[0][1] in owners
    # the source's bytes decide: the destination buffer is the new string's own (a vector
    # element's or a node's, where the analysis also sees the elements around it)
    return guarded and range_kinds(module, fn, [s], _STRING_INLINE_BYTES) <= {"int"}


def _string_buffer_fill(fn, d: str) -> bool:
    """Whether `d` is the buffer of a std::string being built: on every way either its inline
    buffer or the block std::string::_M_create made for it (ad/stage.py: the AD stage's
    definition of it). What is copied there is characters, whatever the object around the
    string holds."""
    ways = merged_values(fn, d)
    for v in ways:
        inst = fn.defs.get(v)
        made = inst is not None and inst.opcode == "call" and inst.callee in (
            "@" + STRING_CREATE_DEFINED, "@" + STRING_CREATE)
        if not made and _inline_string_buffer(fn, v) is None:
            return False
    return bool(ways)


def string_characters(module, fn, p: str) -> bool:
    """Whether `p` is a std::string's data pointer, on every way it may come: loaded from the
    string's first field (the load's type tag names the string type and offset 0), or a phi
    or select of such. Whatever the object around the string holds, that pointer points to
    characters (the string's inline buffer or its heap block). Such a pointer without a
    shadow of its own (made by a library routine: `std::string::_M_replace`) is kept in
    shadow memory as null: nothing reads floats through it, and freeing null is nothing."""
    for v in merged_values(fn, p):
        inst = fn.defs.get(v)
        if inst is None or inst.opcode != "load" or inst.type != "ptr" \
                or not _string_field_tag(module, inst.metadata.get("!tbaa"), 0):
            return False
    return True


def _string_field_tag(module, tag: str | None, offset: int) -> bool:
    """Whether a !tbaa access tag is the field at `offset` of a libstdc++ string of characters."""
    m = re.match(r'!\{(![0-9]+),\s*![0-9]+,\s*i64\s+(\d+)', module.metadata.get(tag or "", ""))
    if not m or int(m.group(2)) != offset:
        return False
    base = re.match(r'!\{!"([^"]*)"', module.metadata.get(m.group(1), ""))
    return bool(base) and base.group(1).startswith(STRING_TBAA_TYPES)


def _string_buffer_word(gen, inst) -> bool:
    """A character-tagged integer load from a std::string's inline buffer (its characters,
    or the capacity a heap-allocated string keeps there) whose bytes hold no float or
    pointer: an integer, wherever the analysis places the copy's destination."""
    module = gen.engine.module
    p = inst.operands[0][1]
    return _inline_string_buffer(gen.fn, p) is not None \
        and tbaa_type(module, inst.metadata.get("!tbaa")) == "omnipotent char" \
        and range_kinds(module, gen.fn, [p], int(inst.type[1:]) // 8) <= {"int"}


def _kinds_through_roots(gen, pointers) -> set[str]:
    return _kinds_in(gen.fn, pointers)


_CALLER_DEPTH = 6


def _kinds_from_callers(module, fn, pointers, depth: int = _CALLER_DEPTH, seen=None) -> set[str]:
    """Element kinds of the memory behind `pointers` (rooted in fn's parameters) as seen by
    fn's callers: the accesses through the actual arguments' roots, walking further up while
    a caller only passes its own parameters on."""
    seen = set() if seen is None else seen
    if depth == 0 or fn.name in seen:
        return set()
    seen.add(fn.name)
    roots = set()
    for p in pointers:
        roots |= pointer_roots(fn, p)
    index = [i for i, p in enumerate(fn.params) if p.name in roots]
    if not index:
        return set()
    kinds: set[str] = set()
    target = make_name("@", fn.name)
    needle = target + "("
    for name in list(module.functions):
        if name == fn.name or not any(needle in line for line in module.functions.body_lines(name)):
            continue
        caller = module.functions[name]
        for inst in caller.instructions():
            if inst.opcode != "call" or inst.callee != target:
                continue
            args = [inst.operands[i][1] for i in index if i < len(inst.operands)]
            found = _kinds_in(caller, args)
            kinds |= found or _kinds_from_callers(module, caller, args, depth - 1, seen)
    return kinds


def _kinds_in(fn, pointers) -> set[str]:
    # a null root is no memory: pointers merged with null (a std::vector's storage before it
    # is allocated, `null + n` as its end) share no bytes through it
    roots = set()
    for p in pointers:
        roots |= pointer_roots(fn, p)
    roots.discard("null")
    # memory copied to or from these roots holds the same bytes: what its accesses say counts
    # too (std::vector<double> u(x, x + n); std::vector<double> e = u; then e's elements read)
    copies = [(pointer_roots(fn, i.operands[0][1]) - {"null"}, pointer_roots(fn, i.operands[1][1]) - {"null"})
              for i in fn.of_opcode("call") if i.callee and ("llvm.memcpy" in i.callee or "llvm.memmove" in i.callee)]
    grew = True
    while grew:
        grew = False
        for d, s in copies:
            if (d & roots or s & roots) and not (d | s) <= roots:
                roots |= d | s
                grew = True
    kinds = set()
    for inst in fn.instructions():
        if inst.opcode in ("load", "store"):
            ptr = inst.operands[0][1] if inst.opcode == "load" else inst.operands[1][1]
            if pointer_roots(fn, ptr) & roots:
                if is_float_type(inst.type):
                    kinds.add(inst.type)
                elif inst.type == "ptr":
                    kinds.add("pointer")
        elif inst.opcode == "getelementptr" and pointer_roots(fn, inst.operands[0][1]) & roots:
            if inst.source_type in ("double", "float"):
                kinds.add(inst.source_type)
    return kinds


def float_views(fn, module) -> dict[str, str]:
    """Integer values that carry float data: `load i64` later bitcast to double, integer
    loads tagged "double"/"float", and `bitcast double to i64` results (what SROA/instcombine
    leave of a memcpy of one double). value -> the float type it stands for."""
    views: dict[str, str] = {}
    widths = {"i64": "double", "i32": "float"}
    for inst in fn.instructions():
        if inst.opcode == "bitcast" and inst.result:
            src_ty, src = inst.operands[0]
            if is_float_type(inst.type) and widths.get(src_ty) == inst.type:
                for v in _merged_loads(fn, src):
                    views[v] = inst.type
            elif inst.type in widths and is_float_type(src_ty) and widths[inst.type] == src_ty:
                views[inst.result] = src_ty
        elif inst.opcode == "load" and inst.type in widths:
            kind = _kind_of_tbaa(tbaa_type(module, inst.metadata.get("!tbaa")))
            if kind == widths[inst.type]:
                views[inst.result] = kind
    # integer copies (values only stored again) of bytes the memory type analysis finds to be
    # one float of the same width: `memcpy(&w, &b[1], 8)`, uint64_t word-copy loops, swaps
    for value, kinds in copy_kinds(module, fn).items():
        ty = fn.defs[value].type if value in fn.defs else ""
        if value not in views and len(kinds) == 1 and widths.get(ty) in kinds:
            views[value] = widths[ty]
    # phis/selects merging such values (and constants), loop-carried ones included (the bits
    # of the largest element kept across a loop: phi [0, %w.next], %w.next = phi [%load, %w]):
    # the greatest set of merges whose inputs are views, constants or merges of the set, less
    # those that no view reaches
    ins_of = {i.result: ([v for v, _ in i.incoming] if i.opcode == "phi" else [i.operands[1][1], i.operands[2][1]])
              for i in fn.of_opcode("phi", "select") if i.type in widths and i.result not in views}
    ty_of = {v: fn.defs[v].type for v in ins_of}
    web = set(ins_of)
    changed = True
    while changed:
        changed = False
        for v in list(web):
            if not all(x in web or views.get(x) == widths[ty_of[v]] if x.startswith("%") else
                       x in ("undef", "poison") or x.lstrip("-").isdigit() for x in ins_of[v]):
                web.discard(v)
                changed = True
    reached = {v for v in web if any(x in views for x in ins_of[v])}
    changed = True
    while changed:
        changed = False
        for v in web - reached:
            if any(x in reached for x in ins_of[v]):
                reached.add(v)
                changed = True
    for v in reached:
        views[v] = widths[ty_of[v]]
    return views


def _merged_loads(fn, value: str) -> list[str]:
    """`value` and the phis/selects/freezes, loads and float-to-integer bitcasts it merges,
    when every value so reached is one of those (or a constant): an integer load
    reinterpreted as a float, or a word picked on a branch (`phi [load b[0], load b[1]]`,
    what GVN leaves of a conditional memmove) and then read as a double. Any arithmetic in
    the web (bits computed, not moved) gives []: the whole web stays integer."""
    web, work = [], [value]
    while work:
        v = work.pop()
        if v in web:
            continue
        d = fn.defs.get(v)
        if d is None:
            return []
        web.append(v)
        if d.opcode == "load" or (d.opcode == "bitcast" and is_float_type(d.operands[0][0])):
            continue
        if d.opcode == "phi":
            ins = [x for x, _ in d.incoming]
        elif d.opcode == "select":
            ins = [d.operands[1][1], d.operands[2][1]]
        elif d.opcode == "freeze":
            ins = [d.operands[0][1]]
        else:
            return []
        for x in ins:
            if x.startswith("%"):
                work.append(x)
            elif not (x in ("undef", "poison") or x.lstrip("-").isdigit()):
                return []
    return web


_TBAA_ATTACH = re.compile(r',\s*!tbaa\s+!\d+')


def strip_punned_tbaa(fn, module, views: dict[str, str]) -> None:
    """Integer loads/stores that move float bytes (views) under an integer `!tbaa` tag (a
    `uint64_t` word copy of doubles) lose the tag: once derivatives are inlined next to the
    float accesses of the same memory, the tag would let the optimizer reorder them."""
    for inst in fn.of_opcode("load", "store", "call") if views else fn.of_opcode("call"):
        if inst.opcode == "load" and inst.result in views:
            pass
        elif inst.opcode == "store" and inst.operands[0][1] in views:
            pass
        elif inst.opcode == "call" and inst.metadata.get("!tbaa") and len(inst.operands) > 2 and \
                re.match(r'@llvm\.mem(cpy|move)', inst.callee or "") and \
                range_kinds(module, fn, [inst.operands[0][1], inst.operands[1][1]],
                            int(inst.operands[2][1]) if inst.operands[2][1].isdigit() else None) & {"double", "float"}:
            pass     # a word-copy loop turned into memcpy keeps the words' integer tag
        else:
            continue
        kind = _kind_of_tbaa(tbaa_type(module, inst.metadata.get("!tbaa")))
        if inst.metadata.get("!tbaa") and kind not in ("double", "float"):
            inst.text = _TBAA_ATTACH.sub("", inst.text)
            inst.metadata.pop("!tbaa", None)


_BIT_SLICERS = {"trunc", "lshr", "ashr", "and", "zext", "sext", "shl", "or", "freeze"}


def _walk_users(fn, value: str, follow):
    """(value, user) for every user of `value` and, transitively, of the results of the
    users `follow(user)` accepts, each value visited once."""
    users = fn.users()
    seen, work = set(), [value]
    while work:
        v = work.pop()
        if v in seen:
            continue
        seen.add(v)
        for u in users.get(v, []):
            yield v, u
            if follow(u):
                work.append(u.result)


def _integer_result(ops):
    return lambda u: u.opcode in ops and bool(u.result) and u.type.startswith("i")


def unpacked_float(fn, value: str) -> str | None:
    """The first `bitcast ... to float/double` the integer `value` reaches through bit
    slicing (trunc, shifts, masks): an i64 load of two floats unpacked lane by lane."""
    for v, u in _walk_users(fn, value, _integer_result(_BIT_SLICERS)):
        if u.opcode == "bitcast" and is_float_type(u.type) and v != value:
            return u.text.strip()   # (the whole integer reinterpreted is a view, not cut)
    return None


def check_packed_floats(fn, module, inst, location) -> None:
    """A load of active memory as an integer whose bits are cut into floats (two floats in
    one i64, a {float, int} pair in one register): the engine would lose their derivatives
    silently, so refuse naming the load."""
    if inst.opcode != "load" or not inst.type.startswith("i"):
        return
    used = unpacked_float(fn, inst.result)
    if used is None:
        return
    raise EnzymeBuildError(
        f"floating-point data is loaded as one integer and cut into floats ({inst.text.split(', !', 1)[0].strip()}, "
        f"then {used.split(', !', 1)[0]}) in @{fn.name}; the derivative cannot follow the bits",
        location=location,
        hint="copy float arrays and small float structs with float-typed loads (or memcpy of whole "
             "elements), not through a wider integer")


def pointer_carriers(fn, module) -> set[str]:
    """Integer loads (i64) that only move bytes holding pointers, or pointers and integers, to
    stores (an evaluator's fields copied as words, a generic swap of pointers): the sweeps
    move the shadow's bytes along with them."""
    users = fn.users()
    out = set()
    for v, kinds in copy_kinds(module, fn).items():
        d = fn.defs.get(v)
        if "pointer" not in kinds or not kinds <= {"int", "pointer"} or d is None or d.type != "i64":
            continue
        if all(u.opcode == "store" and u.operands[0][1] == v for u in users.get(v, [])):
            out.add(v)
    return out


def check_integer_copy(gen, inst) -> None:
    """An integer load whose value is only stored (a copy) from/to active memory: the memory
    type analysis decides what it moves (`float_views` made the single-float cases views);
    refuse when the bytes are floats or pointers it cannot move as one value."""
    if inst.opcode != "load" or inst.result in gen.views or not re.fullmatch(r'i\d+', inst.type):
        return
    kinds = copy_kinds(gen.engine.module, gen.fn).get(inst.result)
    if not kinds or kinds <= {"int"} or inst.result in pointer_carriers(gen.fn, gen.engine.module):
        return
    if _string_buffer_word(gen, inst):
        return
    if inst.type not in ("i64", "i32") and not any(k.startswith(("part of", "double", "float")) for k in kinds):
        return
    what = "/".join(sorted(kinds))
    raise EnzymeBuildError(
        f"the integer copy {inst.text.split(', !', 1)[0].strip()} in @{gen.fn.name} moves {what} data "
        f"that cannot be differentiated as one {inst.type} value", location=gen.engine.location(inst),
        hint="copy the floating-point values as double/float (or field by field), not through an "
             "integer of another width or one mixing types")


# integer users through which the bits of a float view stay ordinary integers
_INT_PROPAGATORS = {"add", "sub", "mul", "udiv", "sdiv", "urem", "srem", "shl", "lshr", "ashr",
                    "and", "or", "xor", "trunc", "zext", "sext", "phi", "select", "freeze"}
_INT_SINKS = {"icmp", "uitofp", "sitofp", "br", "switch", "getelementptr"}


def bits_stay_integer(fn, value: str) -> bool:
    """True when the integer `value` (computed from a float's bit pattern: sign tests,
    exponent extraction) only reaches comparisons, numeric int->float conversions and
    addresses — never a bitcast back to a float, a store or a call that could turn the
    bits into a float again. Such uses carry no derivative."""
    follow = _integer_result(_INT_PROPAGATORS)
    return all(u.opcode in _INT_SINKS or follow(u) or _exponent_operand(u, v)
               for v, u in _walk_users(fn, value, follow))


def _exponent_operand(call, v: str) -> bool:
    """Whether `v` is only an exponent of the math call (`ldexp(1.0, -e)` with e read from a
    float's bits: the scale is a step function of it)."""
    if call.opcode != "call" or not call.callee:
        return False
    at = [k for k, (_, x) in enumerate(call.operands) if x == v]
    return bool(at) and all(math_integer_operand(call.callee, k) for k in at)


def declared_element_types(gen, inst) -> set[str]:
    """Element types (arrays stripped) of the allocas and globals a memcpy's pointers come from."""
    module = gen.engine.module
    found = set()
    for p in (inst.operands[0][1], inst.operands[1][1]):
        for r in pointer_roots(gen.fn, p):
            d = gen.fn.defs.get(r)
            ty = d.source_type if d is not None and d.opcode == "alloca" else None
            if ty is None and r.startswith("@"):
                m = re.match(r'^@(?:"[^"]*"|\S+)\s*=\s*(?:.*?)\bglobal\s+(.*)$',
                             module.globals.get(r[1:].strip('"'), ""))
                ty = take_type(m.group(1))[0] if m else None
            while ty:
                m = re.fullmatch(r'\[(\d+) x (.+)\]', ty.strip())
                if not m:
                    break
                ty = m.group(2)
            if ty:
                found.add(ty.strip())
    return found


def memcpy_record_type(gen, inst, with_pointers: bool = False) -> str | None:
    """The layout clang states for the copy (`_tbaa_struct_record`), `_memcpy_record_type`,
    or the fields of a struct the copy spans (`_field_range_record`)."""
    return _tbaa_struct_record(gen, inst, with_pointers) or _memcpy_record_type(gen, inst, with_pointers) \
        or _field_range_record(gen, inst, with_pointers)


def _floats_at(gen, inst, off: int, size: int, kinds=("double", "float", "pointer")) -> bool:
    """Whether an access the memory type analysis knows reads or writes a float (or puts a
    pointer; `kinds`) in the `size` bytes at `off` from the copy's start, on either side."""
    from .memtypes import Place, may_overlap
    facts, places = _copy_places(gen, inst)
    starts = [Place(p.root, p.offset + off, p.stride, p.lo) for p in places]
    return any(f.strong and f.kind in kinds and may_overlap(p, size, f.place, f.size) for f in facts for p in starts)


def _copy_places(gen, inst):
    """(the memory type facts of the copy's function, the places of its two pointers)."""
    from .memtypes import MemoryTypes
    mt = MemoryTypes.of(gen.engine.module)
    ft = mt.function(gen.fn)
    return mt.facts_for(gen.fn), [p for v in (inst.operands[0][1], inst.operands[1][1])
                                  for p in (ft.places.get(v) or mt._global_places(v)).values()]


def _misaligned_floats(gen, inst, n: int) -> bool:
    """Whether an access the memory type analysis knows reads or writes a float inside the
    `n` copied bytes at an offset from the copy's start that is not a multiple of its size
    (a packed record's `double` at offset 20): a run of floats would cut it in two."""
    from .memtypes import may_overlap
    facts, places = _copy_places(gen, inst)
    starts = [p for p in places if not p.stride]
    if not starts:
        return False
    for f in facts:
        if not f.strong or f.kind not in ("double", "float") or f.place.stride:
            continue
        for p in starts:
            if may_overlap(p, n, f.place, f.size) and (f.place.offset - p.offset) % f.size:
                return True
    return False


_TBAA_FIELD_TYPES = {"double": "double", "float": "float", "pointer": "ptr"}


def _tbaa_struct_record(gen, inst, with_pointers: bool) -> str | None:
    """A literal packed struct laid out by the copy's `!tbaa.struct` (clang's (offset, size,
    type) of every field an aggregate copy moves), when every field is a float, an integer
    or a pointer and the copy's length is constant: a packed record's doubles at offsets 20
    and 28 are where the helper moves their adjoints, whatever the alignment."""
    from .memtypes import type_size
    n = inst.operands[2][1] if len(inst.operands) > 2 else ""
    module = gen.engine.module
    node = module.metadata.get(inst.metadata.get("!tbaa.struct") or "", "")
    triples = re.findall(r'i64 (\d+), i64 (\d+), (![0-9]+)', node)
    if not n.isdigit() or not triples:
        return None
    fields, at = [], 0
    for off, size, tag in sorted(((int(o), int(z), t) for o, z, t in triples)):
        kind = _kind_of_tbaa(tbaa_type(module, tag))
        if off < at:
            return None
        if kind is None and tbaa_type(module, tag) == "omnipotent char" \
                and not _floats_at(gen, inst, off, size):
            kind = "bytes"      # a char array or a union no access reads a float from
        if kind is None:
            return None
        if kind == "bytes":
            fields.append((off, f"[{size} x i8]"))
            at = off + size
            continue
        if kind == "int" and size == 8 and _floats_at(gen, inst, off, size, kinds=("pointer",)):
            kind = "pointer"    # an integer field the program fills with a pointer (`uintptr_t at`)
        ty = _TBAA_FIELD_TYPES.get(kind) or f"i{8 * size}"
        one = type_size(module, ty)
        if kind in ("double", "float") and one and size > one and size % one == 0:
            ty = f"[{size // one} x {ty}]"     # an array field (`double x[15]`) is one entry
        elif one != size:
            return None
        fields.append((off, ty))
        at = off + size
    return _layout_record(module, fields, int(n), with_pointers)


def _memcpy_record_type(gen, inst, with_pointers: bool = False) -> str | None:
    """The record type a memcpy of mixed fields copies (an array of `struct { double; float;
    int }`), from the allocations or globals its pointers come from; None when unknown, when
    the copy's constant length is not a whole number of records, or (unless `with_pointers`)
    when the record holds pointers. With `with_pointers` a record of pointers next to floats
    and integers (`struct view { double *p; int n; double scale; }`) qualifies: the forward
    sweep copies its pointers' shadows, the reverse moves its floats' adjoints."""
    from ..ir.model import pointer_leaves
    from .activity import _float_record_type
    from .memtypes import type_size
    module = gen.engine.module
    found = {t for t in declared_element_types(gen, inst) if t.startswith(("%", "{", "<{"))}
    if len(found) > 1:
        # the element type both pointers index (`&contacts[i]` of an array of records inside a
        # larger object) over the outer object's type, when the copy is whole elements of it
        direct = {d.source_type.strip() for v in (inst.operands[0][1], inst.operands[1][1])
                  if (d := gen.fn.defs.get(v)) is not None and d.opcode == "getelementptr"
                  and d.source_type.strip().startswith("%")}
        n = inst.operands[2][1] if len(inst.operands) > 2 else ""
        if len(direct) == 1 and direct <= found and n.isdigit() \
                and (size := type_size(module, next(iter(direct)))) and int(n) % size == 0:
            found = direct
    if len(found) != 1:
        return _word_record(gen, inst, with_pointers)
    ty = found.pop()
    if with_pointers and not any(True for _ in pointer_leaves(module, ty)) and _float_record_type(module, ty) \
            and not _holds_union(module, ty):
        # the declared record holds no pointer: what looked like one at the copied bytes is
        # another object's (a pointer member after an array of such records, reached through
        # the array's stride)
        with_pointers = False
    if with_pointers:
        if "<" in ty.replace("<{", "").replace("}>", "") or not any(True for _ in pointer_leaves(module, ty)):
            return _word_record(gen, inst, with_pointers)
        body = ty if not ty.startswith("%") else (named_type_body(module, ty) or "")
        if "<" in body.replace("<{", "").replace("}>", ""):
            return None   # vectors: not a record of scalars
    elif not _float_record_type(module, ty):
        return _word_record(gen, inst, with_pointers)
    size = type_size(module, ty)
    n = inst.operands[2][1] if len(inst.operands) > 2 else ""
    if not size or (n.isdigit() and int(n) % size):
        return _word_record(gen, inst, with_pointers)
    return ty


def _field_range_record(gen, inst, with_pointers: bool) -> str | None:
    """A literal packed struct for a constant-length copy of consecutive fields of a struct,
    from field k to the end of a later field (or of the struct, padding included): the copy
    a defaulted copy constructor makes of a class's scalar members after its containers
    (tk::spline's `double m_c0; spline_type m_type; bd_type m_left, m_right; double
    m_left_value, m_right_value; bool m_made_monotonic;`: 41 bytes of a packed class, no
    type tag). Both pointers must be such a field of the same struct type, by a GEP."""
    from .memtypes import field_offset, type_size
    n = inst.operands[2][1] if len(inst.operands) > 2 else ""
    if not n.isdigit():
        return None
    module, fn = gen.engine.module, gen.fn
    spots = set()
    for v in (inst.operands[0][1], inst.operands[1][1]):
        d = fn.defs.get(v)
        if d is None or d.opcode != "getelementptr":
            spots.add(None)
        elif len(d.operands) == 3 and d.operands[1][1] == "0" and d.operands[2][1].isdigit() \
                and d.source_type.startswith("%"):
            spots.add((d.source_type.strip(), int(d.operands[2][1])))
        elif len(d.operands) == 2 and d.source_type == "i8" and d.operands[1][1].isdigit():
            # a byte offset into a stack object of a known type (GEPs canonicalized to i8)
            base = fn.defs.get(d.operands[0][1])
            spots.add(_field_at(module, base.source_type, int(d.operands[1][1]), int(n))
                      if base is not None and base.opcode == "alloca" else None)
        else:
            spots.add(None)
    spots.discard(None)
    if len(spots) != 1:
        return None
    ty, k = spots.pop()
    start = field_offset(module, ty, k)
    total = type_size(module, ty)
    if start is None or total is None or start[0] + int(n) > total:
        return None
    end, at, fields, i = start[0] + int(n), start[0], [], k
    while at < end:
        f = field_offset(module, ty, i)
        if f is None:
            break                               # past the last field: trailing padding
        off, fty = f
        size = type_size(module, fty)
        if size is None or off + size > end:
            return None                         # a field cut by the copy's end
        fields.append((off - start[0], fty))
        at, i = off + size, i + 1
    return _layout_record(module, fields, int(n), with_pointers)


def _layout_record(module, fields: list[tuple[int, str]], n: int, with_pointers: bool) -> str | None:
    """The literal packed struct of `n` bytes holding each (offset, type) field where it is,
    `[k x i8]` between and after them; None when the fields run past `n`, when it holds a
    pointer (unless `with_pointers`), or when it holds no float."""
    from ..ir.model import pointer_leaves
    from .activity import _float_record_type
    from .memtypes import type_size
    parts, at = [], 0
    for off, ty in fields:
        if off > at:
            parts.append(f"[{off - at} x i8]")
        parts.append(ty)
        at = off + (type_size(module, ty) or 0)
    if at > n:
        return None
    if at < n:
        parts.append(f"[{n - at} x i8]")
    record = "<{ " + ", ".join(parts) + " }>"
    if type_size(module, record) != n:
        return None
    if any(True for _ in pointer_leaves(module, record)):
        return record if with_pointers else None
    return record if _float_record_type(module, record) else None


def _field_at(module, ty: str, offset: int, n: int, depth: int = 0) -> tuple[str, int] | None:
    """(struct type, field index) of the innermost struct in `ty` with a field starting at
    `offset` whose bytes from there hold the `n` copied ones; None when there is none."""
    from .memtypes import field_offset, type_size
    ty = ty.strip()
    if depth > 8 or not ty.startswith(("%", "{", "<{")):
        return None
    size = type_size(module, ty)
    if size is None or offset + n > size:
        return None
    k = 0
    while (f := field_offset(module, ty, k)) is not None:
        off, fty = f
        fsize = type_size(module, fty)
        if fsize is None:
            return None
        if off <= offset < off + fsize:
            inner = _field_at(module, fty, offset - off, n, depth + 1)
            if inner is not None:
                return inner
            return (ty, k) if off == offset else None
        k += 1
    return None


_WORD_TYPES = {"double": "double", "pointer": "ptr", "int": "i64"}


def _union_type_at(gen, ptr: str) -> bool:
    """Whether `ptr` is declared as pointing to a union (`%union.*`): a stack union, or a
    GEP to a union field (std::function's `_Any_data`, a variant's storage)."""
    from .memtypes import field_offset
    d = gen.fn.defs.get(ptr)
    if d is None:
        return False
    if d.opcode == "alloca":
        return _is_union(d.source_type)
    if d.opcode != "getelementptr":
        return False
    ty = d.source_type.strip()
    indices = [v for _, v in d.operands[1:]]
    for idx in indices[1:]:
        if not idx.lstrip("-").isdigit():
            return False
        found = field_offset(gen.engine.module, ty, int(idx))
        if found is None:
            return False
        ty = found[1]
    return len(indices) > 1 and _is_union(ty)


def _holds_union(module, ty: str, depth: int = 0) -> bool:
    """Whether type `ty` has a union inside (LLVM spells a union as one of its members: its
    declared type says nothing of the others, a pointer among them)."""
    from ..ir.model import split_top
    ty = ty.strip()
    if depth > 16:
        return True
    if _is_union(ty):
        return True
    if ty.startswith("%"):
        body = named_type_body(module, ty)
        return body is None or _holds_union(module, body, depth + 1)
    m = re.fullmatch(r'\[(\d+) x (.+)\]', ty)
    if m:
        return _holds_union(module, m.group(2), depth + 1)
    if ty.startswith(("{", "<{")):
        inner = ty[2:-2] if ty.startswith("<{") else ty[1:-1]
        return any(_holds_union(module, e, depth + 1) for e in split_top(inner))
    return False


def _is_union(ty: str) -> bool:
    return ty.strip().replace('"', "").startswith("%union.")


def _union_copy_unknown(gen, inst) -> bool:
    """A constant-length copy of a union (type-punned storage: what it holds depends on who
    wrote it last) some of whose words the memory type analysis cannot name. Its kinds come
    from the words it does know; a double among the unknown ones would lose its adjoint
    (std::function's `_Any_data` holding a lambda's captures `{const double *; double}`,
    moved by std::function's move constructor, read as a pointer copy)."""
    n = inst.operands[2][1] if len(inst.operands) > 2 else ""
    if not n.isdigit() or not any(_union_type_at(gen, inst.operands[k][1]) for k in (0, 1)):
        return False
    return not _copied_words(gen, inst, int(n))


def _copied_words(gen, inst, n: int) -> list[str] | None:
    """The kind of each 8-byte word an `n`-byte copy moves (`memtypes.range_words`): what its
    source holds, where it goes only when that is unknown (the destination may be an element
    of a container whose places the analysis merges); None when some word is unknown."""
    module = gen.engine.module
    return range_words(module, gen.fn, [inst.operands[1][1]], n) or \
        range_words(module, gen.fn, [inst.operands[0][1]], n)


def _word_record(gen, inst, with_pointers: bool) -> str | None:
    """A literal struct for a constant-length copy whose every 8-byte word the memory type
    analysis knows (`memtypes.range_words`): a part of a larger object copied alone, such
    as a lambda's captures `{const double *; double}` moved into a std::function's inline
    storage (the declared type, `std::function`'s 32 bytes, is not what the 16-byte copy
    holds). Only a mix of doubles with pointers (with `with_pointers`) or integers."""
    n = inst.operands[2][1] if len(inst.operands) > 2 else ""
    if not n.isdigit():
        return None
    module = gen.engine.module
    tagged = _tbaa_struct_words(module, inst.metadata.get("!tbaa.struct"), int(n))
    if tagged:
        # a word tagged as an integer that the program fills with a pointer (`uintptr_t`):
        # a pointer, whose shadow moves with it
        held = word_kinds(module, gen.fn, [inst.operands[0][1], inst.operands[1][1]], int(n))
        words = ["pointer" if t == "int" and "pointer" in k and not k & {"double", "float"} else t
                 for t, k in zip(tagged, held)]
    else:
        words = _copied_words(gen, inst, int(n))
    if not words or "double" not in words or len(set(words)) < 2 or ("pointer" in words and not with_pointers):
        return None
    return "{ " + ", ".join(_WORD_TYPES[w] for w in words) + " }"


def check_vector_operands(fn, inst, varied, location) -> None:
    """Vector code the Scalarizer left (vectors crossing a call or a return) carrying a value
    with a derivative: refuse naming it rather than lose the derivative. `location` is the
    source location, or a function giving it (asked only for the error)."""
    if inst.opcode not in ("insertelement", "shufflevector", "extractelement") and not (
            inst.opcode == "bitcast" and "<" in inst.text):
        return
    if not any(v in varied for v in inst.values()):
        return
    if inst.result and only_reaches_integers(fn, inst.result):
        return
    raise EnzymeBuildError(
        f"cannot differentiate vector code on active values ({inst.text.split(', !', 1)[0].strip()} in "
        f"@{fn.name})", location=location() if callable(location) else location,
        hint="vector floating-point code is split into scalars before differentiation; this value "
             "crosses a call or return as a vector: make the function inline or pass the elements")


_VECTOR_BUILDERS = {"insertelement", "shufflevector"}
_INTEGER_RESULTS = {"fcmp", "fptosi", "fptoui"}


def mixed_float_aggregate(ty: str) -> bool:
    """A struct/array type holding floats next to integers (`{ double, i64 }`: a struct
    returned by value in two registers). Such values cannot carry a derivative here.
    Aggregates with pointers (`{ ptr, double }`, an augmented rule's tape and result) are
    not this case: the sweeps give them shadows field by field."""
    from ..ir.model import aggregate_elements
    elems = aggregate_elements(ty)
    if not elems or is_active_type(ty):
        return False
    flat = _leaf_types(ty)
    return any(is_float_type(t) for t in flat) and all(is_float_type(t) or re.fullmatch(r'i\d+', t) for t in flat)


def _leaf_types(ty: str) -> list[str]:
    from ..ir.model import aggregate_elements
    elems = aggregate_elements(ty)
    if elems is None:
        return [ty.strip()]
    return [t for e in elems for t in _leaf_types(e)]


def check_mixed_aggregates(fn, inst, varied, location) -> None:
    """A value with a derivative put into (or a call with active arguments returning) an
    aggregate mixing floats and integers: refuse rather than drop the derivative. The AD
    stage inlines the functions that return such aggregates first (ad/boundaries.py), so
    this remains only where they cannot be inlined (recursion). `location`: as for
    check_vector_operands."""
    if not inst.result or inst.opcode not in ("call", "invoke", "insertvalue") or \
            not mixed_float_aggregate(inst.type):
        return
    if not any(v in varied for v in inst.values()):
        return
    raise EnzymeBuildError(
        f"a value with a derivative goes into the aggregate {inst.type} ({inst.text.split(', !', 1)[0].strip()} "
        f"in @{fn.name}), which mixes floating-point and integer fields; its derivative cannot follow it",
        location=location() if callable(location) else location,
        hint="this is a struct returned by value in registers from a function that cannot be inlined "
             "(recursion): return it through a pointer argument, or keep its floats in a struct of their own")


def only_reaches_integers(fn, value: str) -> bool:
    """Whether a vector of floats only feeds operations with integer results (a conversion
    to integers such as `llvm.x86.sse2.cvtpd2dq` in a vectorized exp, comparisons): its
    derivative is never needed, so it need not be refused."""
    def follow(u):
        return u.opcode in _VECTOR_BUILDERS and bool(u.result)

    def integer_result(u):
        return u.opcode in _INTEGER_RESULTS or (
            u.opcode == "call" and bool(u.result) and re.fullmatch(r'<\d+ x i\d+>|i\d+', u.type or "")
            and (u.callee or "").startswith("@llvm.x86."))
    return all(follow(u) or integer_result(u) for _, u in _walk_users(fn, value, follow))


