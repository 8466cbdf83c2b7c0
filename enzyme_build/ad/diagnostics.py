"""The messages the AD engine gives users when it cannot differentiate something: which
construct, where (file:line with -g), through which chain of callers, and the fixes.
Names are shown as the user wrote them (C++ names demangled).
"""
from __future__ import annotations

import re
import sys

from ..analysis.activity import callee_name, pointer_roots
from ..custom import convention
from ..errors import EnzymeBuildError
from ..ir.model import Function, Instruction, entry_point_name, is_local, make_name, strip_name
from .abi import marker_kind


# what the OpenMP refusals (here and in ad/openmp.py) offer instead
OPENMP_SUPPORTED = ("supported: `parallel for` with static/dynamic/guided schedules, reduction(+:…), "
                    "private/firstprivate/lastprivate/shared data, `omp atomic` updates, barriers, "
                    "single/master/sections")


def missing_derivative(engine, inst: Instruction, fn: Function, partial_rule: bool = False,
                       mode: str = "reverse") -> None:
    """Raise the error for an active call the engine cannot differentiate: nested AD, inline
    assembly, an indirect call, an intrinsic, or a function without body and rule (naming
    the function, the caller chain and both fixes, in the user's C++ spelling)."""
    if inst.callee and marker_kind(inst.callee):
        raise EnzymeBuildError(
            f"@{fn.name} calls {entry_point_name(inst.callee)}: differentiating a function that itself "
            f"differentiates (e.g. reverse over reverse for Hessians) is not supported",
            location=engine.location(inst) or f"@{fn.name}",
            hint="compute the inner derivative by hand (or with finite differences), or give the "
                 "inner function a custom derivative rule")
    if inst.callee is None and re.search(r'\basm\b', inst.text.split("(", 1)[0]):
        chain = " -> ".join([c for c, _ in engine.chain])
        raise EnzymeBuildError(
            f"cannot differentiate through inline assembly with active operands (call chain: {chain})",
            location=engine.location(inst) or f"@{fn.name}",
            hint="move the assembly into a function with a custom derivative rule, or mark that "
                 "function inactive if it does not affect derivatives")
    if inst.callee is None:
        m = re.search(r'\bcall\b[^%(]*?(%[-a-zA-Z$._0-9]+)\(', inst.text)
        raise _outside_pointer_error(engine, fn, inst, m.group(1) if m else None,
                                     engine.location(inst) or f"@{fn.name}")
    raw_callee = strip_name(inst.callee)
    names = demangled([c for c, _ in engine.chain] + [raw_callee, fn.name])
    callee = names.get(raw_callee, raw_callee)
    chain = " -> ".join(names.get(c, c) for c in [c for c, _ in engine.chain] + [raw_callee])
    where = engine.location(inst) or f"@{names.get(fn.name, fn.name)}"
    if raw_callee.startswith("llvm."):
        raise EnzymeBuildError(
            f"cannot differentiate the LLVM intrinsic '{raw_callee}' with active operands (call chain: {chain})",
            location=where, hint="this construct is not supported by the AD engine; move it into a function "
                                 "with a custom derivative rule, or keep it away from active data")
    if raw_callee.startswith(("__kmpc_", "omp_", "GOMP_")):
        # an OpenMP runtime call: marking it inactive would give silently wrong gradients
        raise EnzymeBuildError(
            f"cannot differentiate the OpenMP construct behind '{raw_callee}' with active data "
            f"(call chain: {chain})", location=where,
            hint=f"{OPENMP_SUPPORTED}, built with -fopenmp (docs/openmp.md); restructure the code into those")
    what = "has only part of a custom rule (augment and gradient are both needed)" if partial_rule \
        else "has no body and no derivative rule"
    allocation_like = getattr(engine.registry, "allocation_like", {})
    if raw_callee in allocation_like:
        raise EnzymeBuildError(
            f"cannot differentiate through '{callee}': it is registered with __enzyme_allocation_like, "
            f"which enzyme-build supports only for allocators whose body is part of the program "
            f"(call chain: {chain})", location=where,
            hint="build the allocator's source with enzyme-build (its malloc then gets a shadow), or "
                 "allocate the active memory with malloc/calloc/new")
    # C++: a rule is named by a plain identifier, the function by its qualified name
    ident = re.sub(r"\W", "_", callee.split("(", 1)[0].split("::")[-1]) if raw_callee.startswith("_Z") else callee
    ref = f"(void*){callee.split('(', 1)[0]}" if raw_callee.startswith("_Z") else callee
    ext = 'extern "C" ' if raw_callee.startswith("_Z") else ""
    on_decl = f" on the declaration of {callee.split('(', 1)[0]}" if raw_callee.startswith("_Z") else ""
    if mode == "forward":
        raise EnzymeBuildError(
            f"cannot differentiate through '{callee}': it {what} (call chain: {chain})",
            location=where,
            hint=f"give it a forward rule, e.g. __attribute__((enzyme(\"forward\", {ident}_fwd))){on_decl} or a "
                 f"global `{ext}void* __enzyme_register_derivative_{ident}[] = {{{ref}, (void*){ident}_fwd}};` "
                 f"where {ident}_fwd follows Enzyme's convention: {convention.describe('forward')}"
                 f" — or, if it does not affect derivatives, mark it "
                 f"inactive: `{ext}void* __enzyme_inactivefn[] = {{{ref}}};`")
    raise EnzymeBuildError(
        f"cannot differentiate through '{callee}': it {what} (call chain: {chain})",
        location=where,
        hint=f"give it a custom rule, e.g. __attribute__((enzyme(\"augment\", {ident}_aug))) and "
             f"__attribute__((enzyme(\"gradient\", {ident}_grad))){on_decl} or a global "
             f"`{ext}void* __enzyme_register_gradient_{ident}[] = {{{ref}, (void*){ident}_aug, (void*){ident}_grad}};`"
             f" — or, if it does not affect derivatives, mark it inactive: "
             f"`{ext}void* __enzyme_inactivefn[] = {{{ref}}};`")


_OUTSIDE_POINTER_FIX = ("build the callee's source with enzyme-build and take its address in the program, give "
                        "the callee a custom rule and call it directly, or mark the data it touches enzyme_const")


def _outside_pointer_what(fn: Function, call: Instruction | None, pointer: str | None) -> str:
    """Why the call through `pointer` (the indirect call `call`) has no derivative: no function
    of the program has its type, and where the pointer comes from."""
    fnty = f"{call.type or 'void'} ({', '.join(t for t, _ in call.operands)})" if call else "the call's type"
    origin = _pointer_origin(fn, pointer) if pointer else None
    return (f"no function of the program whose address is taken has its type {fnty}, so the pointer comes from "
            f"outside the program (a library, dlsym) or was cast" + (f"; the function pointer is {origin}"
                                                                     if origin else ""))


def _outside_pointer_error(engine, fn: Function, call: Instruction | None, pointer: str | None,
                           where: str) -> EnzymeBuildError:
    """The refusal of an active indirect call whose pointer no function of the program can be."""
    chain = " -> ".join([c for c, _ in engine.chain])
    return EnzymeBuildError(
        f"cannot differentiate through an indirect call (function pointer or virtual call) with active "
        f"arguments (call chain: {chain} -> ?): {_outside_pointer_what(fn, call, pointer)}", location=where,
        hint="indirect calls are differentiated when the pointer is one of the program's functions "
             f"(callbacks in structs, tables, vtables: docs/indirect-calls.md); {_OUTSIDE_POINTER_FIX}")


def _pointer_origin(fn: Function, value: str) -> str | None:
    """Where an indirect call's target `value` comes from, in the user's terms, when it is a
    parameter or is loaded from memory a parameter points to."""
    from ..analysis.activity import pointer_roots
    params = {p.name: k for k, p in enumerate(fn.params, 1)}
    if value in params:
        return f"parameter {params[value]} of {fn.name}"
    d = fn.defs.get(value)
    if d is None or d.opcode != "load" or not d.operands:
        return None
    for root in sorted(pointer_roots(fn, d.operands[0][1])):
        if root in params:
            return f"loaded from memory that parameter {params[root]} of {fn.name} points to (e.g. a struct of callbacks)"
    return None


def demangled(names: list[str]) -> dict[str, str]:
    """C++ names as the user wrote them (`_ZN3sim8blackboxEd` -> `sim::blackbox(double)`), for
    messages; through llvm-cxxfilt (or c++filt), names unchanged when neither is there."""
    import shutil
    import subprocess
    mangled = sorted({n for n in names if n.startswith("_Z")})
    tool = next((t for t in ("llvm-cxxfilt-22", "/usr/lib/llvm-22/bin/llvm-cxxfilt", "llvm-cxxfilt", "c++filt")
                 if shutil.which(t)), None)
    if not mangled or tool is None:
        return {}
    try:
        proc = subprocess.run([tool], input="\n".join(mangled) + "\n", capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return {}
    out = proc.stdout.splitlines()
    return dict(zip(mangled, out)) if proc.returncode == 0 and len(out) == len(mangled) else {}


_ATTACHED_METADATA = re.compile(r',\s*![-\w.]+\s+!\d+')


def refuse_untracked_loads(engine, fn: Function, act, what: str) -> None:
    """The error for floats read through a pointer a call returned inside a struct (the
    activity analysis's `untracked_loads`); `what` is "derivative" or "tangent"."""
    from ..analysis.activity import callee_name
    for load, call in act.untracked_loads:
        shown = _ATTACHED_METADATA.sub("", load.text.strip())
        raise EnzymeBuildError(
            f"cannot follow a pointer that @{callee_name(call) or 'an indirect call'} returns inside a struct "
            f"({shown} in @{fn.name}): the data it points to may be active, and its {what} would be lost",
            location=engine.location(load) or engine.location(call),
            hint="return the pointer on its own (or through an out-parameter), or make the function "
                 "inlinable: enzyme-build inlines such functions unless they are recursive or have no body")


_STORE_INTO_GLOBAL = re.compile(r'^\s*store (?:volatile )?ptr (.*), ptr (@[-\w$.]+|@"[^"]+")(?:, align \d+)?(?:, !.*)?$')
_GLOBAL_NAME = re.compile(r'@[-\w$.]+|@"[^"]+"')


def _values_stored_into(engine, g: str) -> set[str]:
    """The globals whose addresses the program ever puts into the pointer global `g`: named
    in its initializer or in a `store ptr ..., ptr @g` anywhere in the module (memoized)."""
    table = engine.memo.get(("pointer-global-values",))
    if table is None:
        table = {}
        for line in engine.module.lines:
            m = _STORE_INTO_GLOBAL.match(line)
            if m:
                table.setdefault(m.group(2), set()).update(_GLOBAL_NAME.findall(m.group(1)))
        for name, line in engine.module.globals.items():
            init = line.split("=", 1)[1] if "=" in line else ""
            table.setdefault(make_name("@", name), set()).update(_GLOBAL_NAME.findall(init))
        engine.memo[("pointer-global-values",)] = table
    return table.get(g, set())


def _input_derived(fn: Function, act) -> set[str]:
    """The values of `fn` computed from its differentiated inputs: its varied parameters and
    floats loaded through its parameters, and everything computed from those (a global's own
    values, varied only because the global has a shadow, are not)."""
    from ..analysis.activity import pointer_roots
    params = {p.name for p in fn.params}
    seeds = {p for p in params if p in act.varied}
    derived: set[str] = set(seeds)
    grew = True
    while grew:
        grew = False
        for inst in fn.instructions():
            if not inst.result or inst.result in derived or inst.result not in act.varied:
                continue
            if inst.opcode == "load":
                hit = bool(pointer_roots(fn, inst.operands[0][1]) & params)
            else:
                hit = any(v in derived for _, v in inst.operands) or \
                    (inst.opcode == "phi" and any(v in derived for v, _ in inst.incoming))
            if hit:
                derived.add(inst.result)
                grew = True
    return derived


def refuse_aliased_global_pointer_loads(engine, fn: Function, act, what: str) -> None:
    """Floats read through a pointer loaded from a global without a shadow are taken as
    inactive. When the program points that global at an array this function stores floats
    computed from its inputs into (a struct member only ever set to `&scratch`, whose stores
    the optimizer folded to the array itself while the loads still go through the member),
    the derivative through that memory would be lost without a word: an error instead.
    `what` is "derivative" or "tangent"."""
    from ..analysis.activity import global_base, pointer_global, pointer_roots
    from ..ir.model import is_float_type
    candidates = [load for load in fn.of_opcode("load") if is_float_type(load.type)
                  and pointer_global(fn, load.operands[0][1], act.shadowed) is not None]
    if not candidates:
        return
    derived = _input_derived(fn, act)
    written: set[str] = set()   # globals holding floats computed from the inputs
    for store in fn.of_opcode("store"):
        (vty, v), (_, p) = store.operands
        if is_float_type(vty) and v in derived:
            written |= {g for r in pointer_roots(fn, p) if (g := global_base(r)) is not None}
    if not written:
        return
    for load in candidates:
        g = pointer_global(fn, load.operands[0][1], act.shadowed)
        hit = sorted(_values_stored_into(engine, g) & written)
        if hit:
            shown = _ATTACHED_METADATA.sub("", load.text.strip())
            owner, _, member = strip_name(g).rpartition(".")
            held = f"a pointer member of the global '{owner}' ({g})" if member.isdigit() and owner \
                and owner not in engine.module.functions else g
            raise EnzymeBuildError(
                f"floats are read through the pointer held in {held}, which the program points at {hit[0]}, "
                f"an array @{fn.name} stores values computed from its inputs into; the pointer has no shadow, "
                f"so the {what} through it would be lost ({shown} in @{fn.name})",
                location=engine.location(load) or f"@{fn.name}",
                hint="use the array directly, or keep the workspace pointer in a global of its own and "
                     "declare a shadow pointer for it (`double *d_work; void *__enzyme_shadow_global_work[2] = "
                     "{&work, &d_work};`), or pass the workspace to the differentiated function as a parameter "
                     "(enzyme_dup with a zeroed shadow buffer of the same size)")


def active_argument_not_a_float(ty: str, callee: str, location) -> EnzymeBuildError:
    """An active value of a type without a derivative passed to a call: a float's bits in an
    integer (a `double` copied into a `uint64_t` and passed by value to a function that
    cannot be inlined, e.g. a recursive one), or an aggregate."""
    if re.fullmatch(r"i\d+", ty):
        return EnzymeBuildError(
            f"passing a float's bits as an integer ({ty}) to @{callee} is not supported",
            location=location, hint="pass the value as a double (or float), not as an integer holding its bytes")
    return EnzymeBuildError(f"passing an active aggregate ({ty}) to @{callee} is not supported",
                            location=location, hint="pass the fields as separate arguments")


def warn_dropped_const_paths(engine, fn: Function, act) -> None:
    """An active value stored into memory the caller passed as enzyme_const, which the
    function also reads floats from: the derivative through that memory is dropped (the
    caller declared it constant, as in Enzyme). Whether the store and the load meet in one
    function depends on inlining, so the result may differ between -O0 and -O2: say so once
    per function and argument, on stderr, and go on."""
    for root, inst in sorted(act.dropped_const_paths.items()):
        _warn_dropped_const_path(engine, fn, root, inst)


def _warn_dropped_const_path(engine, fn: Function, root: str, inst: Instruction, by: str = "") -> None:
    """The warning of `warn_dropped_const_paths`, once per function and argument."""
    seen = engine.memo.setdefault(("warned-const-paths",), set())
    key = (fn.name, root)
    if key in seen:
        return
    seen.add(key)
    names = [p.name for p in fn.params]
    which = f"argument {names.index(root) + 1}" if root in names else root
    where = engine.location(inst) or f"@{fn.name}"
    print(f"enzyme-build: warning: {where}: @{fn.name} stores an active value{by} into the memory of its "
          f"{which}, passed as enzyme_const, and reads floats back from it; the derivative through "
          f"that memory is dropped (fix: pass it as enzyme_dup with a zeroed shadow to keep it)",
          file=sys.stderr)


def uncallable_pointer(engine, fn: Function, marker: Instruction) -> None:
    """Derived code keeps a call through a function pointer that no function of the program
    can be (`indirect.uncallable`: none whose address is taken has the call's type) with
    arguments that carry derivatives, where `marker` is. When every call of `fn` makes it
    (its block post-dominates the entry), refuse it; otherwise derived code stops the program
    there if it gets there (an interpreter's branch for an arity no expression uses, a hook
    left unset): say so once per function and place, on stderr, and go on."""
    from ..analysis.cfg import PostDominators
    pointer = marker.operands[0][1]
    call = next((i for i in fn.instructions() if i.opcode in ("call", "invoke") and i.callee is None
                 and i.block == marker.block and f" {pointer}(" in i.text), None)
    where = engine.location(marker) or f"@{fn.name}"
    if PostDominators(fn).post_dominates(marker.block, fn.blocks[0].label):
        raise _outside_pointer_error(engine, fn, call, pointer, where)
    seen = engine.memo.setdefault(("warned-uncallable",), set())
    if (fn.name, where) in seen:
        return
    seen.add((fn.name, where))
    chain = " -> ".join([c for c, _ in engine.chain])
    print(f"enzyme-build: warning: {where}: @{fn.name} calls a function pointer with arguments that carry "
          f"derivatives (call chain: {chain} -> ?) on some of its paths, and "
          f"{_outside_pointer_what(fn, call, pointer)}: derived code stops with a message if it reaches "
          f"this call (fix: {_OUTSIDE_POINTER_FIX}; docs/indirect-calls.md)", file=sys.stderr)


class ResolvedByInlining(EnzymeBuildError):
    """A refusal that inlining may lift: `inline` names functions ('@'-prefixed) whose bodies,
    inlined before AD, bring the refused construct and what it depends on into one function
    (ad/stage.py inlines them and differentiates again; without progress the error stands)."""

    def __init__(self, message: str, *, location: str | None = None, hint: str | None = None,
                 inline=frozenset()):
        super().__init__(message, location=location, hint=hint)
        self.inline = frozenset(inline)


def inlining_candidates(engine, fn: Function, holder: str | None) -> set[str]:
    """Functions to inline so that a pointer without a shadow, kept in memory that holds
    shadowed pointers (a context struct: `{const double *mass; double *pos; ...}`), ends up in
    the function that reads it back: the defined callees `fn` gives pointers into that memory
    when it is `fn`'s own stack object, and `fn` itself when the memory (or, for a returned
    pointer, the pointer) came from its caller. In one function SROA makes the struct's
    fields plain values, and a constant pointer read back from one is constant again."""
    out: set[str] = set()
    roots = pointer_roots(fn, holder) - {"null"} if holder else set()
    if (holder is None or roots & {p.name for p in fn.params}) and len(engine.chain) > 1:
        out.add(make_name("@", fn.name))
    stack = {r for r in roots if (d := fn.defs.get(r)) is not None and d.opcode == "alloca"}
    if stack:
        for inst in fn.of_opcode("call"):
            if inst.callee and callee_name(inst) in engine.module.functions and any(
                    t == "ptr" and pointer_roots(fn, v) & stack for t, v in inst.operands):
                out.add(inst.callee)
    return out


def refuse_unshadowed_pointer(engine, fn: Function, v: str, inst: Instruction) -> None:
    """Raise the error for a pointer without a shadow stored (`inst` a store) into memory that
    holds shadowed pointers, or returned beside its shadow: Enzyme's "mismatched activity".
    Nothing could be stored in the shadow memory that callees reading it back would treat
    right (the primal pointer would take derivatives into constant data; null would crash),
    so it is ResolvedByInlining when inlining may bring the struct and its readers together."""
    holder = inst.operands[1][1] if inst.opcode == "store" else None
    inline = inlining_candidates(engine, fn, holder)
    params = [p.name for p in fn.params]
    args = sorted(params.index(r) for r in pointer_roots(fn, v) if r in params)
    if args:
        # a pointer the caller passed without a shadow (enzyme_const) kept in memory that
        # carries derivatives (a struct of pointers)
        # (IR names: ABI lowering and the optimizer may have changed the parameter list)
        which = " and ".join(f"the pointer parameter {params[k]}" for k in args)
        into = f" (through {v})" if v not in params else ""
        raise ResolvedByInlining(
            f"{which} of {demangled([fn.name]).get(fn.name, fn.name)} has no shadow ("
            + ("it was passed with enzyme_const" if len(engine.chain) <= 1 else "its caller passes it without one")
            + f") but is stored{into} into memory that holds differentiated data, or returned",
            location=engine.location(inst), inline=inline,
            hint="pass it with enzyme_dup and a zeroed buffer of the same size as its shadow (the "
                 "derivative with respect to it is then computed too, and can be ignored), or keep "
                 "the pointer out of the structures that hold active data")
    raise ResolvedByInlining(
        f"a pointer to memory without a shadow ({v}) is stored into active memory or returned "
        f"in @{fn.name}", location=engine.location(inst), inline=inline,
        hint="pass that memory as an enzyme_dup argument, or allocate it inside the function")


_BIT_SLICES = {"lshr", "ashr", "shl", "and", "or", "xor", "trunc"}


def float_bits_travel(fn: Function, v: str, use: Instruction, location) -> EnzymeBuildError:
    """The refusal of an active float's bits used as an integer (`use` reads `v`), with the
    fix that fits: a whole float's bits cut by shifts and masks are an exponent or a mantissa
    read from it; other integer arithmetic is a value moved through an integer register (a
    small struct passed by value)."""
    d = fn.defs.get(v)
    whole = d is not None and d.opcode == "bitcast" and d.operands[0][0] in ("double", "float") \
        and d.type == {"double": "i64", "float": "i32"}[d.operands[0][0]]
    sliced = whole and use.opcode in _BIT_SLICES   # not a struct's fields packed into one register
    return EnzymeBuildError(
        f"the bits of an active float travel as an integer ('{use.opcode}' on {v}) in @{fn.name}; "
        f"its derivative cannot follow them", location=location,
        hint="read the exponent with frexp() or ilogb() instead of the float's bits (an exponent used only "
             "in comparisons, as an index or as an ldexp/scalbn scale within the function is accepted; "
             "returned or passed to other functions it is not)" if sliced else
             "move floating-point data as double/float values, not through integer registers: a small struct "
             "mixing a float with other fields passed or returned by value travels in one; pass it by pointer")


def refuse_mixed_shadow_merges(engine, fn: Function, act) -> None:
    """A phi or select that merges a pointer with a shadow and one without (`bufout = odd ?
    out : st->tmpbuf`, kissfft's multi-dimensional FFT; `p = k ? a : c` with `c` passed
    enzyme_const). The merged pointer has a shadow, and on the way without one that shadow was
    the pointer itself: derivatives were added into the primal memory (the caller's constant
    input changed by the gradient call) and read back from it as if they were derivatives.
    Constants (null, a sentinel address), globals, and pointers only ever to functions or
    constant tables without floats keep their old treatment (their own shadows)."""
    from ..analysis.activity import _ptr_inputs, shadow_is_primal
    for inst in fn.of_opcode("phi", "select"):
        if inst.type != "ptr" or inst.result is None or not act.has_shadow(inst.result):
            continue
        for v in _ptr_inputs(inst):
            v = v.strip()
            # (constants and globals keep the old treatment: a sentinel `inttoptr (i64 -24 to
            # ptr)` is never dereferenced)
            if not is_local(v) or act.has_shadow(v) or shadow_is_primal(engine.module, v, fn):
                continue
            raise EnzymeBuildError(
                f"a pointer that has no shadow ({v}) is merged with one that has one "
                f"({inst.text.strip()} in @{fn.name}): the derivatives through the merged pointer "
                f"would be added into the memory {v} points to, as if it were its own shadow",
                location=engine.location(inst),
                hint="pass that memory as an enzyme_dup argument with a zeroed shadow (memory inside an "
                     "enzyme_const struct, or an enzyme_const argument, has none), or keep the two "
                     "pointers apart")


def refuse_lost_call_stores(engine, fn: Function, act, arg_activity) -> None:
    """The call form of `lost_active_store`: a call hands a pointer that has no shadow, and
    that the user did not declare constant (a workspace pointer loaded from an enzyme_const
    struct: `fill(w->buf, x)`), to a function that stores derivative-carrying data through
    it (`Engine.writes_active_through`). The callee would take the memory for constant and
    drop those writes, and what is read back from it here would count as constant: the
    gradient through it was 0, silently, where the same store written inline was refused."""
    from ..analysis.activity import call_arg_activity, global_base
    declared = {p.name for p, a in zip(fn.params, arg_activity) if a == "const" and p.type == "ptr"}
    returning = read_back = None
    for inst in fn.of_opcode("call"):
        name = callee_name(inst)
        if name not in engine.module.functions or name in engine.custom or not engine.module.functions[name].blocks:
            continue
        ops = inst.operands
        if not any(is_local(v) and (v in act.varied or act.has_shadow(v)) for _, v in ops) \
                and name not in engine.global_users:     # active anyway: it reads active globals
            continue
        if returning is None:
            from ..analysis.cfg import returning_blocks
            returning = returning_blocks(fn)
        if inst.block not in returning:
            continue
        sub = call_arg_activity(act, ops)
        for j, (t, v) in enumerate(ops):
            if t != "ptr" or sub[j] != "const" or not is_local(v):
                continue
            roots = {global_base(r) or r for r in pointer_roots(fn, v)}
            if roots and roots <= declared:
                # memory the user declared constant may absorb it: warned of where it is
                # read back as floats, as for a store written here
                if read_back is None:
                    read_back = {global_base(r) or r for ld in fn.of_opcode("load") if ld.type in ("double", "float")
                                 for r in pointer_roots(fn, ld.operands[0][1])}
                if roots & read_back and engine.writes_active_through(name, sub, j):
                    for r in sorted(roots & read_back):
                        _warn_dropped_const_path(engine, fn, r, inst, f" (through @{name})")
                continue
            if engine.writes_active_through(name, sub, j):
                raise EnzymeBuildError(
                    f"an active value is stored where enzyme-build cannot give the memory a shadow: "
                    f"@{name} writes derivative-carrying data through its parameter {j + 1}, and "
                    f"@{fn.name} passes it {v}, which has no shadow ({inst.text.strip()})",
                    location=engine.location(inst),
                    hint="pass that memory as an enzyme_dup argument (a workspace inside an "
                         "enzyme_const struct has no shadow), allocate it in the differentiated "
                         "code, or mark the pointer argument enzyme_const if its contents do not matter")


def lost_active_store(engine, fn: Function, inst: Instruction) -> EnzymeBuildError:
    """The refusal of a store (or a copy) of active data into memory no shadow can follow:
    memory a library routine the engine does not know returned, for instance."""
    return EnzymeBuildError(
        f"an active value is stored where enzyme-build cannot give the memory a shadow "
        f"({inst.text.strip()} in @{fn.name})", location=engine.location(inst),
        hint="pass that memory as an enzyme_dup argument, allocate it in the differentiated "
             "code, or mark the pointer argument enzyme_const if its contents do not matter")
