"""Type analysis of memory by byte offset: what the bytes an access touches hold.

An integer load whose value is only stored again (a copy: `memcpy(&w, &b[1], 8)` after
SROA, a `uint64_t` word-copy loop, a generic swap) moves whatever the bytes are. Its type
is decided from every other access to the same bytes, as Enzyme's TypeAnalysis does:

- **Addresses.** Every pointer value is a set of (root, offset, stride): the bytes at
  `root + offset + k*stride` for some k (stride 0: exactly that offset). GEPs add constant
  offsets and turn variable indices into strides (gcd with the element size); phis and
  selects join (a pointer walk `p++` becomes stride 8). Roots are allocas, arguments,
  allocation calls, loaded pointers and globals.
- **Evidence.** Loads and stores of floats and pointers are *strong* evidence of their
  type at their address; integer loads and stores used as integers (arithmetic,
  comparisons, indexing) are strong integer evidence; a `bitcast double` stored as i64 is
  double evidence; `!tbaa` integer tags on a pure copy are *weak* (the word-copy helper's
  `uint64_t` is not what the bytes are) and count only when nothing else is known.
- **Propagation.** Copies (integer copies, `memcpy`/`memmove` of constant length) carry
  the types found on either side to the other, to a fixpoint. Memory reached through a
  function's pointer parameters also takes the evidence of the callers' arguments, and
  memory passed to a defined callee the evidence of the callee's accesses (a few levels,
  memoized per function and path).
- **Memory behind loaded pointers.** Every pointer loaded from a place also gets a *deep
  root* (`*root+offset`) naming what pointers stored there point to, as Enzyme's type trees
  type a field's pointee: two loads of `p->b` share their evidence. Deep roots over
  parameters travel across calls like the parameters; a pointer stored into memory *links*
  the deep root of where it went to the pointer's own memory, in callers too.

`copy_kinds` answers the question the engine asks (which types a copy moves);
`print_memory_types` prints the analysis of one function for tests and debugging.
"""
from __future__ import annotations

import functools
import math
import re
import weakref
from dataclasses import dataclass, field

from ..ir.model import Function, Module, is_float_type, make_name, merged_values, named_type_body, split_top, tbaa_type
from .indices import affine_index
from .library import manages_punned_storage

# kinds: what bytes hold
DOUBLE, FLOAT, INT, POINTER = "double", "float", "int", "pointer"

_FORWARDERS = {"getelementptr", "bitcast", "addrspacecast", "phi", "select", "freeze"}
_INT_TBAA = {"int", "long", "long long", "short", "char", "bool", "_Bool", "unsigned int",
             "unsigned long", "unsigned long long"}
_NUW_GEP = re.compile(r'= getelementptr (?:inbounds )?(?:nusw )?nuw ')
_MAX_ROUNDS = 6
_SPELLED_ELEMENTS = 16   # arrays inside structs up to this length give a fact per element
_DEPTH = 4


# ---------------------------------------------------------------- layout (x86-64)

def type_size(module: Module | None, ty: str) -> int | None:
    """Allocation size in bytes of an IR type; None when unknown (opaque, scalable)."""
    info = _layout(module, ty.strip(), 0)
    return info[0] if info else None


def _layout(module, ty: str, depth: int) -> tuple[int, int] | None:
    """(alloc size, alignment)."""
    if depth > 32:
        return None
    if ty in ("double", "i64", "ptr"):
        return 8, 8
    if ty in ("float", "i32"):
        return 4, 4
    if ty in ("i16", "half", "bfloat"):
        return 2, 2
    if ty in ("i8", "i1"):
        return 1, 1
    if ty in ("x86_fp80", "fp128", "i128"):
        return 16, 16
    m = re.fullmatch(r'i(\d+)', ty)
    if m:
        bits = int(m.group(1))
        size = 1 << max(0, math.ceil(math.log2(max(8, bits) / 8)))
        return size, min(size, 16)
    m = re.fullmatch(r'\[(\d+) x (.+)\]', ty)
    if m:
        elem = _layout(module, m.group(2).strip(), depth + 1)
        return (int(m.group(1)) * elem[0], elem[1]) if elem else None
    m = re.fullmatch(r'<(\d+) x (.+)>', ty)
    if m:
        elem = _layout(module, m.group(2).strip(), depth + 1)
        if not elem:
            return None
        size = int(m.group(1)) * elem[0]
        p2 = 1 << max(0, (size - 1).bit_length())
        return p2, min(p2, 64)
    if ty.startswith("%") and module is not None:
        body = named_type_body(module, ty)
        return _layout(module, body, depth + 1) if body else None
    packed = ty.startswith("<{")
    if packed or ty.startswith("{"):
        inner = ty[2:-2] if packed else ty[1:-1]
        off, align = 0, 1
        for e in (split_top(inner) if inner.strip() else []):
            info = _layout(module, e.strip(), depth + 1)
            if not info:
                return None
            a = 1 if packed else info[1]
            off = -(-off // a) * a + info[0]
            align = max(align, a)
        return -(-off // align) * align, align
    return None


def field_offset(module, ty: str, index: int) -> tuple[int, str] | None:
    """Byte offset and type of field `index` of a struct, array or vector type."""
    ty = ty.strip()
    if ty.startswith("%"):
        body = named_type_body(module, ty)
        return field_offset(module, body, index) if body else None
    m = re.fullmatch(r'[\[<](\d+) x (.+)[\]>]', ty)
    if m:
        size = type_size(module, m.group(2).strip())
        return (index * size, m.group(2).strip()) if size is not None else None
    packed = ty.startswith("<{")
    if packed or ty.startswith("{"):
        inner = ty[2:-2] if packed else ty[1:-1]
        elems = split_top(inner) if inner.strip() else []
        off = 0
        for k, e in enumerate(elems):
            info = _layout(module, e.strip(), 0)
            if not info:
                return None
            a = 1 if packed else info[1]
            off = -(-off // a) * a
            if k == index:
                return off, e.strip()
            off += info[0]
    return None


def type_leaves(module, ty: str, off: int = 0, stride: int = 0, depth: int = 0):
    """(offset, stride, size, kind) of the scalars in a value of type ty (arrays give a
    stride; at most a few levels deep)."""
    ty = ty.strip()
    if depth > 6:
        return
    kind = scalar_kind(ty)
    if kind is not None:
        size = type_size(module, ty)
        if size:
            yield off, stride, size, kind
        return
    if ty.startswith("%"):
        body = named_type_body(module, ty)
        if body:
            yield from type_leaves(module, body, off, stride, depth + 1)
        return
    m = re.fullmatch(r'\[(\d+) x (.+)\]', ty)
    if m:
        esize = type_size(module, m.group(2).strip())
        count = int(m.group(1))
        if esize and 0 < count <= _SPELLED_ELEMENTS and depth:
            # a short array inside a struct (`std::array<double, 3>` before a std::string):
            # element by element, so its stride does not reach the fields beside it
            for k in range(count):
                yield from type_leaves(module, m.group(2), off + k * esize, stride, depth + 1)
        elif esize:
            yield from type_leaves(module, m.group(2), off, math.gcd(stride, esize), depth + 1)
        return
    if ty.startswith("{") or ty.startswith("<{"):
        inner = ty[2:-2] if ty.startswith("<{") else ty[1:-1]
        for k in range(len(split_top(inner)) if inner.strip() else 0):
            fo = field_offset(module, ty, k)
            if fo is None:
                return
            yield from type_leaves(module, fo[1], off + fo[0], stride, depth + 1)


def scalar_kind(ty: str) -> str | None:
    ty = ty.strip()
    if ty in (DOUBLE, FLOAT):
        return ty
    if ty == "ptr":
        return POINTER
    if re.fullmatch(r'i\d+', ty):
        return INT
    return None


# ---------------------------------------------------------------- addresses

@dataclass(frozen=True)
class Place:
    """Bytes at root + offset + k*stride (stride 0: exactly root + offset), none of them
    below root + lo when `lo` is known (a walk that only moves up: GEPs with `nuw`
    indices, phis of such walks)."""
    root: str
    offset: int
    stride: int = 0
    lo: int | None = None

    def __str__(self) -> str:
        at = f"{self.root}+{self.offset}"
        if not self.stride:
            return at
        return at + f" (mod {self.stride}" + (f", >= {self.lo})" if self.lo is not None else ")")


def _low(p: Place) -> int | None:
    return p.offset if p.stride == 0 else p.lo


def _join(a: Place, b: Place) -> Place:
    s = math.gcd(a.stride, b.stride, abs(a.offset - b.offset))
    if not s:
        return Place(a.root, a.offset, 0)
    la, lb = _low(a), _low(b)
    return Place(a.root, a.offset % s, s, None if la is None or lb is None else min(la, lb))


def _widen(old: Place, new: Place) -> Place:
    """A place that grew in a fixpoint round: a lower bound that went down (a walk moving
    down, `p--`) is dropped at once instead of creeping down round after round."""
    lo_old = _low(old)
    if new.stride and new.lo is not None and (lo_old is None or new.lo < lo_old):
        return Place(new.root, new.offset, new.stride, None)
    return new


def _shift(p: Place, delta: int | None, stride: int = 0, nonneg: bool = False) -> Place:
    """p moved by a constant `delta` plus a variable multiple of `stride` (non-negative when
    `nonneg`: a GEP with `nuw`)."""
    if delta is None:
        return Place(p.root, 0, 1)
    s = math.gcd(p.stride, stride)
    off = p.offset + delta
    if not s:
        return Place(p.root, off, 0)
    base = _low(p)
    lo = base + delta if base is not None and (nonneg or not stride) else None
    return Place(p.root, off % s, s, lo)


_DEEP_LEVELS = 2


def _deep_root(p: Place) -> str | None:
    """The root naming the memory a pointer stored at `p` points to: `*root+offset` (a
    field), `*root+offset%stride` (any element of an array of pointers); None past
    `_DEEP_LEVELS` levels (a pointer chase `p = p->next` would make new names forever)."""
    if p.root.startswith("*" * _DEEP_LEVELS):
        return None
    return f"*{p.root}+{p.offset % p.stride}%{p.stride}" if p.stride else f"*{p.root}+{p.offset}"


@functools.lru_cache(maxsize=4096)
def _deep_parts(root: str) -> tuple[str, int, int] | None:
    """(base root, offset, stride) of a deep root."""
    if not root.startswith("*"):
        return None
    base, _, at = root[1:].rpartition("+")
    off, _, stride = at.partition("%")
    return base, int(off), int(stride or 0)


def _rebased(root: str, base: str, place: Place) -> str | None:
    """A deep root over `base` seen from where `base` sits at `place` (a callee's parameter
    at its argument's place, or a caller's argument at the parameter), None otherwise."""
    parts = _deep_parts(root)
    if parts is None or parts[0] != base:
        return None
    return _deep_root(Place(place.root, place.offset + parts[1], math.gcd(place.stride, parts[2])))


def may_overlap(a: Place, asize: int, b: Place, bsize: int) -> bool:
    if a.root != b.root:
        return False
    g = math.gcd(a.stride, b.stride)
    d = b.offset - a.offset
    if g == 0:
        return -bsize < d < asize
    # a strided place with a lower bound cannot reach an exact place below it
    if a.stride and a.lo is not None and not b.stride and b.offset + bsize <= a.lo:
        return False
    if b.stride and b.lo is not None and not a.stride and a.offset + asize <= b.lo:
        return False
    r = d % g
    return r < asize or g - r < bsize


def same_bytes(a: Place, asize: int, b: Place, bsize: int) -> bool:
    """Whether the access at b, when it overlaps a, lines up with it exactly."""
    if asize != bsize:
        return False
    g = math.gcd(a.stride, b.stride)
    d = b.offset - a.offset
    return d == 0 if g == 0 else d % g == 0 and (g % asize == 0 or g == asize)


@dataclass
class Fact:
    place: Place
    size: int
    kind: str
    strong: bool
    where: str               # the instruction, for printing
    # carried over from the memory a stored pointer points to (`links_for`): the analysis
    # merges places, so such a fact may land on bytes the pointer never reaches
    linked: bool = False

    def __str__(self) -> str:
        return f"{self.place} [{self.size}] {self.kind}{'' if self.strong else ' (weak)'}  ; {self.where}"


@dataclass
class FunctionTypes:
    fn: Function
    places: dict[str, dict[str, Place]] = field(default_factory=dict)   # pointer -> root -> place
    facts: list[Fact] = field(default_factory=list)
    copies: dict[str, tuple] = field(default_factory=dict)  # copy load -> (size, src places, dst places)
    copy_kinds: dict[str, set[str]] = field(default_factory=dict)
    moves: list[tuple] = field(default_factory=list)         # memcpy: (dst places, src places, length)
    calls: list[tuple] = field(default_factory=list)         # (callee, arg index, places, call line)
    # a pointer stored into memory: (the deep root of where it went, the pointer's place);
    # the two name the same bytes (`rows[1] = w` in one function, `rows[1][k]` in another)
    links: list[tuple[Place, Place]] = field(default_factory=list)
    # copies whose load or store is tagged as an integer member of a struct (`pair.first`)
    member_ints: set[str] = field(default_factory=set)


class MemoryTypes:
    """The analysis of a module, one function at a time (memoized on the module)."""

    def __init__(self, module: Module):
        # a proxy: the module holds this analysis (`of`), and a strong reference back would be
        # a cycle keeping the module and every analysis alive until the cyclic collector runs
        self.module = weakref.proxy(module)
        self.functions: dict[str, FunctionTypes] = {}
        self._callers: dict[str, list[tuple[str, object]]] | None = None
        self._param_facts: dict[tuple[str, int, int], list[Fact]] = {}
        # facts_for by (function, depth, functions already on the path): the same question
        # comes back dozens of times from the callers and callees of a call graph; emptied
        # whenever a function is analysed anew (a replaced function changes the answers)
        self._facts_memo: dict[tuple[str, int, frozenset], list[Fact]] = {}

    @classmethod
    def of(cls, module: Module) -> "MemoryTypes":
        mt = getattr(module, "_memory_types", None)
        if mt is None:
            mt = cls(module)
            module._memory_types = mt
        return mt

    # ------------------------------------------------------------ per function
    def function(self, fn: Function) -> FunctionTypes:
        ft = self.functions.get(fn.name)
        if ft is None or ft.fn is not fn:
            ft = FunctionTypes(fn)
            self.functions[fn.name] = ft
            self._facts_memo.clear()
            self._places(ft)
            self._collect(ft)
            self._declared_facts(ft)
        return ft

    def _places(self, ft: FunctionTypes) -> None:
        fn = ft.fn
        places = ft.places
        for p in fn.params:
            if p.type == "ptr":
                places[p.name] = {p.name: Place(p.name, 0)}
        pending, loads, stores = [], [], []
        forwarded: dict[str, tuple[int, int]] = {}   # call result -> (argument index, offset)
        for inst in fn.instructions():
            if inst.opcode == "store" and inst.operands and inst.operands[0][0] == "ptr":
                stores.append(inst)
            if not inst.result or inst.type != "ptr":
                continue
            if inst.opcode == "call" and (fwd := self._forwarding_call(inst)) is not None:
                forwarded[inst.result] = fwd
                pending.append(inst)
            elif inst.opcode in _FORWARDERS:
                pending.append(inst)
            else:
                places[inst.result] = {inst.result: Place(inst.result, 0)}
                if inst.opcode == "load":
                    loads.append(inst)

        def of(v: str) -> dict[str, Place]:
            return places[v] if v in places else self._global_places(v)

        for _ in range(64):
            changed = False
            for inst in pending:
                op = inst.opcode
                if op == "getelementptr":
                    new = {r: self._gep(p, inst, fn, of) for r, p in of(inst.operands[0][1]).items()}
                elif op == "phi":
                    new = {}
                    for v, _ in inst.incoming:
                        for r, p in of(v).items():
                            new[r] = _join(new[r], p) if r in new else p
                elif op == "select":
                    new = {}
                    for v in (inst.operands[1][1], inst.operands[2][1]):
                        for r, p in of(v).items():
                            new[r] = _join(new[r], p) if r in new else p
                elif op == "call":
                    k, delta = forwarded[inst.result]
                    new = {r: _shift(p, delta) for r, p in of(inst.operands[k][1]).items()}
                else:
                    new = dict(of(inst.operands[0][1]))
                old = places.get(inst.result)
                if old != new:
                    if old:
                        for r, p in old.items():
                            new[r] = _widen(p, _join(new[r], p)) if r in new else p
                    if old != new:
                        places[inst.result] = new
                        changed = True
            # every pointer loaded from the same place points to the same kind of memory
            # (Enzyme's type trees say so of a field): a deep root names that memory, so two
            # loads of `p->b` (before and after an opaque call) share what is known of it
            for ld in loads:
                cur = places[ld.result]
                for p in of(ld.operands[0][1]).values():
                    deep = _deep_root(p)
                    if deep is not None and deep not in cur:
                        cur[deep] = Place(deep, 0)
                        changed = True
            # a pointer loaded from where a pointer was stored may be that pointer: the
            # realloc'd buffer that `a->data = realloc(...)` stores and `a->data[i] = v`
            # loads again (no store-to-load forwarding before optimization)
            if stores and loads:
                stored: dict[tuple[str, int], list[str]] = {}
                for st in stores:
                    for p in of(st.operands[1][1]).values():
                        if p.stride == 0 and p.offset is not None:
                            stored.setdefault((p.root, p.offset), []).append(st.operands[0][1])
                for ld in loads:
                    new = dict(places[ld.result])
                    for p in of(ld.operands[0][1]).values():
                        for v in stored.get((p.root, p.offset), ()) if p.stride == 0 else ():
                            for r, q in of(v).items():
                                new[r] = _join(new[r], q) if r in new else q
                    if new != places[ld.result]:
                        places[ld.result] = new
                        changed = True
            if not changed:
                break

    def _constant_gep(self, v: str) -> dict[str, Place]:
        m = re.match(r'getelementptr\s+(?:inbounds\s+|nuw\s+|nusw\s+)*\((.*)\)$', v.strip())
        if not m:
            return {}
        parts = split_top(m.group(1))
        if len(parts) < 2:
            return {}
        src_ty = parts[0].strip()
        base = parts[1].strip().split()[-1]
        if not base.startswith("@"):
            return {}
        ops = [tuple(x.strip().split(None, 1)) for x in parts[2:]]
        delta = self._gep_offset(src_ty, [(t, val) for t, val in ops if True])
        return {base: _shift(Place(base, 0), *delta)}

    def _gep(self, p: Place, inst, fn: Function | None = None, where=None) -> Place:
        delta, stride = self._gep_offset(inst.source_type, inst.operands[1:], fn, where)
        return _shift(p, delta, stride, nonneg=_NUW_GEP.search(inst.text) is not None)

    def _gep_offset(self, src_ty: str, indices, fn: Function | None = None, where=None) -> tuple[int | None, int]:
        """(constant byte offset, stride of the variable part) of GEP indices. A variable
        index of the outermost type is read as an affine sum (`_index_steps`): LLVM writes
        `a[i].f` over an array of 40-byte structs as `getelementptr i8, p, (40*i + 32)`, whose
        bytes are 32 mod 40, not any byte."""
        module = self.module
        size = type_size(module, src_ty)
        if size is None:
            return None, 0
        off, stride = 0, 0
        ty = src_ty
        for k, (idx_ty, idx) in enumerate(indices):
            const = _int_constant(idx)
            if k == 0:
                if const is not None:
                    off += const * size
                elif (steps := _index_steps(fn, idx, idx_ty, where)) is not None:
                    off += steps[0] * size
                    stride = math.gcd(stride, steps[1] * size)
                else:
                    stride = math.gcd(stride, size)
                continue
            ty = ty.strip()
            if ty.startswith("%") or ty.startswith("{") or ty.startswith("<{"):
                if const is None:
                    return None, 0
                fo = field_offset(module, ty, const)
                if fo is None:
                    return None, 0
                off += fo[0]
                ty = fo[1]
            else:
                m = re.fullmatch(r'[\[<](\d+) x (.+)[\]>]', ty)
                if not m:
                    return None, 0
                ty = m.group(2).strip()
                esize = type_size(module, ty)
                if esize is None:
                    return None, 0
                if const is None:
                    stride = math.gcd(stride, esize)
                else:
                    off += const * esize
        return off, stride

    def _collect(self, ft: FunctionTypes) -> None:
        fn, module = ft.fn, self.module
        users = fn.users()
        carried = carried_integers(fn, users)
        punning_manager = manages_punned_storage(fn.name)

        def pure_copy(v: str) -> bool:
            return v in carried

        def stores_reached(v: str) -> list:
            out, seen, work = [], set(), [v]
            while work:
                x = work.pop()
                if x in seen:
                    continue
                seen.add(x)
                for u in users.get(x, []):
                    if u.opcode == "store":
                        out.append(u)
                    elif u.result in carried:
                        work.append(u.result)
            return out

        def bitcast_float(v: str) -> str | None:
            """The float type whose bits the integer v is: it was bitcast from one, or it is
            bitcast to one (a double loaded as i64 and reinterpreted), directly or through the
            phis, selects and freezes that merge it (the bits of the largest element kept
            across a loop, then read as a double)."""
            d = fn.defs.get(v)
            if d is not None and d.opcode == "bitcast" and is_float_type(d.operands[0][0]):
                return d.operands[0][0]
            seen, work = {v}, [v]
            while work:
                x = work.pop()
                for u in users.get(x, []):
                    if u.opcode == "bitcast" and is_float_type(u.type):
                        return u.type
                    if u.opcode in ("phi", "select", "freeze") and u.result not in seen and \
                            (u.opcode != "select" or u.operands[0][1] != x):
                        seen.add(u.result)
                        work.append(u.result)
            return None

        for inst in fn.instructions():
            op = inst.opcode
            if op in ("load", "store"):
                ty = inst.type if op == "load" else inst.operands[0][0]
                ptr = inst.operands[0][1] if op == "load" else inst.operands[1][1]
                size = type_size(module, ty)
                places = ft.places.get(ptr) or self._global_places(ptr)
                if size is None or not places:
                    continue
                if op == "store" and ty == "ptr":
                    stored = ft.places.get(inst.operands[0][1]) or self._global_places(inst.operands[0][1])
                    for a in places.values():
                        deep = _deep_root(a)
                        if deep is not None:
                            ft.links.extend((Place(deep, 0), q) for q in stored.values())
                kind = scalar_kind(ty)
                where = inst.text.split(", !", 1)[0].strip()
                tag = tbaa_type(module, inst.metadata.get("!tbaa"))
                if kind == INT:
                    v = inst.result if op == "load" else inst.operands[0][1]
                    if op == "load" and not users.get(v):
                        continue   # a dead copy (AD before optimization keeps them): no view of the bytes
                    fk = bitcast_float(v)
                    if fk is not None and type_size(module, fk) == size:
                        kind, strong = fk, True
                    elif tag in (DOUBLE, FLOAT):
                        kind, strong = tag, True
                    elif op == "load" and pure_copy(v):
                        ft.copies[v] = (size, list(places.values()),
                                        [q for u in stores_reached(v) for q in (ft.places.get(u.operands[1][1])
                                                                       or self._global_places(u.operands[1][1])).values()])
                        if tag in _INT_TBAA:
                            for p in places.values():
                                ft.facts.append(Fact(p, size, INT, False, where))
                        if any(_integer_member_tag(module, i.metadata.get("!tbaa"))
                               for i in (inst, *stores_reached(v))):
                            ft.member_ints.add(v)
                        continue
                    elif op == "store" and (v in ft.copies or _int_constant(v) is not None
                                            or v in ("undef", "poison", "zeroinitializer")):
                        continue
                    elif op == "store" and v in carried:
                        continue
                    else:
                        strong = True
                elif kind is None:
                    continue
                else:
                    # a pointer a manager of type-punned storage writes (std::function's
                    # `&typeid(F)` or pointer to the functor, over the bytes that hold the
                    # callable) says nothing of what the bytes hold otherwise
                    strong = not (op == "store" and kind == POINTER and punning_manager)
                for p in places.values():
                    ft.facts.append(Fact(p, size, kind, strong, where))
            elif op in ("call", "invoke"):
                name = (inst.callee or "")[1:].strip('"')
                base = re.sub(r'\.(p0|i\d+).*$', "", name)
                if base in ("llvm.memcpy", "llvm.memmove", "llvm.memcpy.inline", "memcpy", "memmove"):
                    n = _int_constant(inst.operands[2][1]) if len(inst.operands) > 2 else None
                    dst = ft.places.get(inst.operands[0][1]) or self._global_places(inst.operands[0][1])
                    src = ft.places.get(inst.operands[1][1]) or self._global_places(inst.operands[1][1])
                    if n and dst and src:
                        ft.moves.append((list(dst.values()), list(src.values()), n))
                    continue
                if name in module.functions:
                    for k, (t, v) in enumerate(inst.operands):
                        if t == "ptr":
                            places = ft.places.get(v) or self._global_places(v)
                            if places:
                                ft.calls.append((name, k, list(places.values()), inst.line))

    def _declared_facts(self, ft: FunctionTypes) -> None:
        """What the declared types of the allocas and globals the function uses say: a
        `[4 x double]` alloca or a `@__const.x = constant { double }` initializer holds
        doubles at those offsets (byte arrays and integers say nothing)."""
        roots = {p.root for places in ft.places.values() for p in places.values()}
        roots |= {p.root for _, src, _ in ft.copies.values() for p in src}
        for dst, src, _ in ft.moves:
            roots |= {p.root for p in dst + src}
        for root in roots:
            ty = None
            d = ft.fn.defs.get(root)
            if d is not None and d.opcode == "alloca":
                ty = d.source_type
            elif root.startswith("@"):
                line = self.module.globals.get(root[1:].strip('"'), "")
                m = re.match(r'^@(?:"[^"]*"|\S+)\s*=\s*(?:.*?)\b(?:global|constant)\s+(.*)$', line)
                if m:
                    from ..ir.model import take_type
                    ty = take_type(m.group(1))[0]
            if ty:
                for off, stride, size, kind in type_leaves(self.module, ty.strip()):
                    if kind != INT:
                        ft.facts.append(Fact(Place(root, off % stride if stride else off, stride), size, kind,
                                             True, f"declared {ty.strip()[:40]}"))

    def _global_places(self, v: str) -> dict[str, Place]:
        if not v.startswith("@"):
            return {}
        if re.fullmatch(r'@(?:"[^"]*"|[-\w$.]+)', v):
            return {v: Place(v, 0)}
        return self._constant_gep(v)

    # ------------------------------------------------------------ interprocedural evidence
    def _callers_of(self, name: str) -> list[tuple[str, object]]:
        if self._callers is None:
            self._callers = {}
            for fname in list(self.module.functions):
                for line in self.module.functions.body_lines(fname):
                    for callee in set(re.findall(r'(?:call|invoke)[^@]*(@(?:"[^"]*"|[-\w$.]+))\(', line)):
                        lst = self._callers.setdefault(callee[1:].strip('"'), [])
                        if fname not in lst:
                            lst.append(fname)
        return self._callers.get(name, [])

    def _passed(self, ft: FunctionTypes, seen: frozenset):
        """(callee, its parameter's name, the places passed as it, call line) for each pointer
        argument of a call of a defined function not in `seen`."""
        for callee, k, places, site in ft.calls:
            cfn = self.module.functions.get(callee)
            if cfn is not None and k < len(cfn.params) and callee not in seen:
                yield cfn, cfn.params[k].name, places, site

    def links_for(self, fn: Function, depth: int = _DEPTH, seen: frozenset = frozenset()) -> list[tuple[Place, Place]]:
        """fn's links and those of its callees over the memory fn passes them (`set_rows(rows,
        u, w)` storing `u` into `rows[0]`: `*rows+0` is `u`'s memory in fn too)."""
        ft = self.function(fn)
        out = list(ft.links)
        if depth <= 0 or fn.name in seen:
            return out
        seen = seen | {fn.name}
        for cfn, pname, places, site in self._passed(ft, seen):
            args = {cfn.params[i].name: list(ps) for c, i, ps, at in ft.calls if at == site and i < len(cfn.params)}
            for a, b in self.links_for(cfn, depth - 1, seen):
                if _deep_parts(a.root) is None or _deep_parts(a.root)[0] != pname:
                    continue
                for p in places:
                    deep = _rebased(a.root, pname, p)
                    if deep is None:
                        continue
                    if b.root in args:         # the stored pointer is another parameter
                        out.extend((Place(deep, 0), _shift(q, b.offset, b.stride)) for q in args[b.root])
                    elif b.root.startswith("*"):
                        for base, qs in args.items():
                            for q in qs:
                                other = _rebased(b.root, base, q)
                                if other is not None:
                                    out.append((Place(deep, 0), Place(other, b.offset, b.stride)))
        return out

    def facts_for(self, fn: Function, depth: int = _DEPTH, seen: frozenset = frozenset()) -> list[Fact]:
        """Strong and weak facts of `fn`, including what callers and callees say about memory
        behind its pointer parameters and the pointers it passes on, and what is known of
        memory a stored pointer points to at the deep root of where it was stored (and back).
        The list is shared: callers read it, never change it."""
        key = (fn.name, depth, seen)
        memo = self._facts_memo.get(key)
        if memo is not None and self.functions[fn.name].fn is fn:
            return memo
        out = self._facts_for(fn, depth, seen)
        links = self.links_for(fn, depth, seen)
        if links:
            wanted: dict[str, list[tuple[Place, Place, bool]]] = {}
            for deep, q in links:
                wanted.setdefault(q.root, []).append((deep, q, True))
                wanted.setdefault(deep.root, []).append((deep, q, False))
            found = []
            for f in out:
                for deep, q, to_deep in wanted.get(f.place.root, ()):
                    if to_deep:
                        g = math.gcd(q.stride, f.place.stride)
                        off = f.place.offset - q.offset
                        found.append(Fact(Place(deep.root, off % g if g else off, g), f.size, f.kind, f.strong,
                                          f"{f.where} (stored at {deep.root[1:]})", linked=True))
                    else:
                        found.append(Fact(_shift(q, f.place.offset, f.place.stride), f.size, f.kind, f.strong,
                                          f"{f.where} (stored at {deep.root[1:]})", linked=True))
            out += found
        # the same fact arrives along many paths (every caller, every level): keep one of each
        unique: dict[tuple, Fact] = {}
        for f in out:
            same = (f.place, f.size, f.kind, f.strong)
            if same not in unique or (unique[same].linked and not f.linked):
                unique[same] = f
        out = list(unique.values())
        self._facts_memo[key] = out
        return out

    def _facts_for(self, fn: Function, depth: int, seen: frozenset) -> list[Fact]:
        ft = self.function(fn)
        out = list(ft.facts)
        if depth <= 0 or fn.name in seen:
            return out
        seen = seen | {fn.name}
        # callees: their facts about their parameter k, placed at our argument
        for cfn, pname, places, _ in self._passed(ft, seen):
            callee = cfn.name
            over = "*" + pname + "+"
            for f in self.facts_for(cfn, depth - 1, seen):
                root = f.place.root
                if root == pname:
                    for p in places:
                        out.append(Fact(_shift(p, f.place.offset, f.place.stride), f.size, f.kind, f.strong,
                                        f"{f.where} (in @{callee})", f.linked))
                elif root[0] == "*" and root.startswith(over):
                    # what the callee knows of memory its parameter's fields point to
                    for p in places:
                        deep = _rebased(f.place.root, pname, p)
                        if deep is not None:
                            out.append(Fact(Place(deep, f.place.offset, f.place.stride, f.place.lo), f.size,
                                            f.kind, f.strong, f"{f.where} (in @{callee})", f.linked))
        # callees returning pointers: their facts about the memory they return, at the call's
        # result (`Hdr *h = make(x, n)` whose `make` fills a fresh block)
        for inst, cfn in self._pointer_results(fn):
            if cfn.name in seen:
                continue
            rets = self._returned_places(cfn)
            if not rets:
                continue
            for f in self.facts_for(cfn, depth - 1, seen):
                at = rets.get(f.place.root)
                if at is not None:
                    out.append(Fact(Place(inst.result, f.place.offset - at, f.place.stride), f.size, f.kind,
                                    f.strong, f"{f.where} (in @{cfn.name}, returned)", f.linked))
        # callers: their facts about the memory we return, at what we return (the doubles a
        # caller reads after the header of the block `make` returns)
        rets = self._returned_places(fn)
        if rets:
            target = make_name("@", fn.name)
            for cname in self._callers_of(fn.name):
                caller = self.module.functions.get(cname)
                if caller is None or cname in seen:
                    continue
                results = {inst.result for inst, cfn in self._pointer_results(caller) if cfn.name == fn.name}
                if not results:
                    continue
                for f in self.facts_for(caller, depth - 1, seen):
                    if f.place.root in results:
                        for root, at in rets.items():
                            out.append(Fact(Place(root, at + f.place.offset, f.place.stride), f.size, f.kind,
                                            f.strong, f"{f.where} (in @{cname}, of the result)", f.linked))
        # callers: their facts about the memory they pass as our parameters
        index = {p.name: i for i, p in enumerate(fn.params) if p.type == "ptr"}
        if index:
            target = make_name("@", fn.name)
            for cname in self._callers_of(fn.name):
                caller = self.module.functions.get(cname)
                if caller is None or cname in seen:
                    continue
                cft = self.function(caller)
                cfacts = None
                for inst in caller.instructions():
                    if inst.opcode not in ("call", "invoke") or inst.callee != target:
                        continue
                    if cfacts is None:
                        cfacts = self.facts_for(caller, depth - 1, seen)
                    for pname, i in index.items():
                        if i >= len(inst.operands):
                            continue
                        for root, at in (cft.places.get(inst.operands[i][1]) or
                                         self._global_places(inst.operands[i][1])).items():
                            over = "*" + root + "+"
                            for f in cfacts:
                                if f.place.root != root:
                                    if f.place.root[0] != "*" or not f.place.root.startswith(over):
                                        continue
                                    # a deep root over the argument: over the parameter here
                                    deep = _rebased(f.place.root, root, Place(pname, -at.offset, at.stride))
                                    if deep is not None:
                                        out.append(Fact(Place(deep, f.place.offset, f.place.stride, f.place.lo),
                                                        f.size, f.kind, f.strong, f"{f.where} (in @{cname})",
                                                        f.linked))
                                    continue
                                # the caller's fact relative to the argument's place
                                g = math.gcd(at.stride, f.place.stride)
                                rel = Place(pname, (f.place.offset - at.offset) % g if g else
                                            f.place.offset - at.offset, g)
                                out.append(Fact(rel, f.size, f.kind, f.strong, f"{f.where} (in @{cname})", f.linked))
        return out

    def _forwarding_call(self, inst) -> tuple[int, int] | None:
        """(k, offset) when `inst` calls a defined function that returns its k-th argument
        moved by a constant offset on every way (`data(h)` returning `(double *)(h + 1)`):
        the result is that argument's memory, as after a GEP. A function whose analysis is
        under way (recursion) says nothing."""
        if not inst.callee:
            return None
        cfn = self.module.functions.get(inst.callee[1:].strip('"'))
        if cfn is None or not cfn.blocks:
            return None
        cft = self.functions.get(cfn.name)
        if cft is not None and cft.fn is cfn and not cft.places:
            return None        # under way
        cft = self.function(cfn)
        params = {p.name: k for k, p in enumerate(cfn.params)}
        found = None
        for ret in cfn.of_opcode("ret"):
            if not ret.operands or ret.operands[0][0] != "ptr":
                return None
            places = cft.places.get(ret.operands[0][1]) or {}
            if len(places) != 1:
                return None
            (root, at), = places.items()
            if root not in params or at.stride or at.offset is None or found not in (None, (params[root], at.offset)):
                return None
            found = (params[root], at.offset)
        if found is None or found[0] >= len(inst.operands):
            return None
        return found

    def _pointer_results(self, fn: Function) -> list:
        """(call, callee) for each call in fn of a defined function returning a pointer."""
        out = []
        for inst in fn.of_opcode("call", "invoke"):
            if inst.result and inst.type == "ptr" and inst.callee:
                cfn = self.module.functions.get(inst.callee[1:].strip('"'))
                if cfn is not None and cfn.blocks:
                    out.append((inst, cfn))
        return out

    def _returned_places(self, fn: Function) -> dict[str, int]:
        """The roots fn returns pointers into, at a constant offset (the same on every `ret`),
        for blocks fn makes itself (an allocation call or another function's result): what
        the callers do with the returned memory is known of those bytes. Empty when fn
        returns anything else (a parameter, a global, a loaded pointer, a walk)."""
        ft = self.function(fn)
        found: dict[str, int] = {}
        for inst in fn.of_opcode("ret"):
            if not inst.operands or inst.operands[0][0] != "ptr":
                return {}
            v = inst.operands[0][1]
            if v == "null":
                continue
            places = ft.places.get(v)
            if not places:
                return {}
            for root, at in places.items():
                d = fn.defs.get(root)
                if at.stride or at.offset is None or d is None or d.opcode != "call" \
                        or found.get(root, at.offset) != at.offset:
                    return {}
                found[root] = at.offset
        return found

    # ------------------------------------------------------------ queries
    def solve(self, fn: Function) -> dict[str, set[str]]:
        """Kinds moved by each integer copy of `fn` (value -> kinds, empty when unknown)."""
        ft = self.function(fn)
        if ft.copy_kinds or not ft.copies:
            return ft.copy_kinds
        facts = self.facts_for(fn)
        kinds: dict[str, set[str]] = {v: set() for v in ft.copies}
        derived: list[Fact] = []
        for _ in range(_MAX_ROUNDS):
            pool = facts + derived
            derived = []
            changed = False
            for v, (size, src, dst) in ft.copies.items():
                # what a copy moves is what its source holds; where the bytes go says what
                # they are only when nothing is known about where they come from (a copy
                # into a field next to pointers must not make the value a pointer). A copy
                # the program tags as an integer member of a struct moves that integer,
                # whatever imprecise places around it say.
                found = ({INT} if v in ft.member_ints else
                         _kinds_at(pool, src, size) or _kinds_at(pool, dst, size)
                         or _kinds_at(pool, src + dst, size, weak=True))
                if v in ft.member_ints and size == 8 and _pointer_filled(pool, src + dst):
                    # an integer member the program fills with a pointer (`uintptr_t at =
                    # (uintptr_t)&x[i]`, a `store ptr` once the AD stage undid the cast):
                    # a pointer, whose shadow moves with it
                    found = {POINTER}
                if found != kinds[v]:
                    kinds[v] = found
                    changed = True
                for k in found:
                    for p in src + dst:
                        derived.append(Fact(p, size, k, True, f"copy {v}"))
            for dst, src, n in ft.moves:
                for f in pool:
                    for s in src:
                        if f.place.root == s.root and may_overlap(s, n, f.place, f.size):
                            for d in dst:
                                g = math.gcd(s.stride, d.stride, f.place.stride)
                                off = d.offset + f.place.offset - s.offset
                                derived.append(Fact(Place(d.root, off % g if g else off, g), f.size, f.kind,
                                                    f.strong, f"moved by memcpy ({f.where})"))
            if not changed and _ > 0:
                break
        ft.copy_kinds = kinds
        return kinds

    def own_kinds_at(self, fn: Function, ptr: str, size: int) -> set[str]:
        """Strong kinds of `size` bytes at pointer `ptr` from fn's own accesses only (no
        callers or callees: cheap enough to ask once per store)."""
        ft = self.function(fn)
        places = list(ft.places.get(ptr, {}).values())
        return _kinds_at(ft.facts, places, size) if places else set()

    def kinds_at(self, fn: Function, ptr: str, size: int) -> set[str]:
        """Strong kinds known for `size` bytes at pointer `ptr` of fn (weak ones if no strong)."""
        ft = self.function(fn)
        places = list((ft.places.get(ptr) or self._global_places(ptr)).values())
        facts = self.facts_for(fn)
        found = _kinds_at(facts, places, size)
        return found or _kinds_at(facts, places, size, weak=True)


_CARRIERS = ("load", "phi", "select", "freeze", "bitcast")


def carried_integers(fn: Function, users: dict[str, list]) -> set[str]:
    """Integer values that only carry bytes from memory (or a float's bits) to memory: loads,
    phis, selects and float-to-integer bitcasts whose every use is a store of the value or
    another such value (the greatest such set)."""
    carried = set()
    for inst in fn.of_opcode(*_CARRIERS):
        if inst.result and inst.type[:1] == "i" and inst.type[1:].isdigit():
            if inst.opcode == "bitcast" and not is_float_type(inst.operands[0][0]):
                continue
            carried.add(inst.result)
    changed = True
    while changed:
        changed = False
        for v in list(carried):
            us = users.get(v, [])
            ok = bool(us) and all(
                (u.opcode == "store" and u.operands[0][1] == v and u.operands[1][1] != v)
                or (u.opcode in ("phi", "freeze") and u.result in carried)
                or (u.opcode == "select" and u.result in carried and u.operands[0][1] != v)
                for u in us)
            if not ok:
                carried.discard(v)
                changed = True
    return carried


def range_kinds(module: Module, fn: Function, pointers: list[str], nbytes: int | None) -> set[str]:
    """Kinds of the strong facts touching `nbytes` bytes (all bytes when unknown) at any of
    `pointers` of fn: what a memcpy of that range moves."""
    mt = MemoryTypes.of(module)
    ft = mt.function(fn)
    places = [p for v in pointers for p in (ft.places.get(v) or mt._global_places(v)).values()]
    out = set()
    for f in mt.facts_for(fn):
        if not f.strong:
            continue
        for p in places:
            span = nbytes if nbytes else 1 << 40
            if may_overlap(Place(p.root, p.offset, p.stride) if nbytes else Place(p.root, 0, 1), span,
                           f.place, f.size):
                out.add(f.kind)
                break
    return out


# how many callers up `caller_range_kinds` follows a parameter (constructor chains of
# library wrappers: std::optional's storage is built five calls below the object's own)
_CALLER_LEVELS = 10


def caller_range_kinds(module: Module, fn: Function, pointers: list[str], nbytes: int) -> set[str]:
    """Kinds of the strong facts the callers know at exactly the `nbytes` bytes at `pointers`
    (constant places over fn's pointer parameters), following the arguments up while a
    caller knows nothing there and only passes its own parameter on: a move constructor
    copying `{double b0, y1}` five wrapper levels below the function that stored them."""
    mt = MemoryTypes.of(module)
    ft = mt.function(fn)
    todo = [(fn, p, _CALLER_LEVELS) for v in pointers for p in (ft.places.get(v) or {}).values()]
    seen: set[tuple[str, Place]] = set()
    out: set[str] = set()
    while todo:
        f, place, levels = todo.pop()
        if levels <= 0 or place.stride or (f.name, place) in seen:
            continue
        seen.add((f.name, place))
        index = next((i for i, prm in enumerate(f.params) if prm.name == place.root), None)
        if index is None:
            continue
        target = make_name("@", f.name)
        for cname in mt._callers_of(f.name):
            caller = module.functions.get(cname)
            if caller is None:
                continue
            cft = mt.function(caller)
            facts = None
            for inst in caller.of_opcode("call", "invoke"):
                if inst.callee != target or index >= len(inst.operands):
                    continue
                arg = inst.operands[index][1]
                for at in (cft.places.get(arg) or mt._global_places(arg)).values():
                    here = _shift(at, place.offset)
                    if facts is None:
                        facts = [x for x in mt.facts_for(caller) if x.strong]
                    found = {x.kind for x in facts if may_overlap(here, nbytes, x.place, x.size)}
                    if found:
                        out |= found
                    else:
                        todo.append((caller, here, levels - 1))
    return out


def _pointer_filled(facts: list[Fact], places: list[Place]) -> bool:
    """Whether a pointer store (a strong fact of the program's own, not one carried over
    from a stored pointer) writes exactly the 8 bytes at one of `places`, and no float
    access touches them."""
    hit = False
    for f in facts:
        if not f.strong or f.linked:
            continue
        for p in places:
            if may_overlap(p, 8, f.place, f.size):
                if f.kind in (DOUBLE, FLOAT):
                    return False
                if f.kind == POINTER and f.size == 8 and same_bytes(p, 8, f.place, f.size):
                    hit = True
    return hit


# the longest copy laid out word by word (`range_words`)
_MAX_WORDS = 16


def range_words(module: Module, fn: Function, pointers: list[str], nbytes: int) -> list[str] | None:
    """What each 8-byte word of a constant-length copy at `pointers` holds, from the strong
    facts at exactly those bytes: 'double', 'pointer' or 'int' per word (a lambda's captures
    `{const double *t; double a}` moved inside a std::function's storage: ['pointer',
    'double']); None when a word holds anything else, more than one kind, a part of a
    value, or nothing known, or the copy is not a few whole words."""
    if nbytes <= 0 or nbytes % 8 or nbytes // 8 > _MAX_WORDS:
        return None
    mt = MemoryTypes.of(module)
    ft = mt.function(fn)
    places = [p for v in pointers for p in (ft.places.get(v) or mt._global_places(v)).values()]
    if not places:
        return None
    strong = [f for f in mt.facts_for(fn) if f.strong]
    # the function's own accesses first (a closure built field by field right before the
    # copy), then those of callers and callees, and what was carried over from pointers
    # stored into the bytes only when those do not say. The analysis does not follow the
    # order of accesses: std::function's manager writes a type_info pointer over the
    # storage a closure's double occupies (for one of its operations), and stores a
    # pointer to an element's storage into storage of the same vector, which carried the
    # captured pointer's target onto the capture itself
    own = [f for f in ft.facts if f.strong]
    for facts in (own, [f for f in strong if not f.linked], strong):
        words = []
        for k in range(0, nbytes, 8):
            kinds = _kinds_at(facts, [_shift(p, k) for p in places], 8)
            if kinds == {INT, POINTER}:
                # an integer that holds a pointer (`uintptr_t`), or a pointer next to integers
                # the analysis cannot tell apart: moved as a pointer, its shadow with it (the
                # shadow of a true integer means nothing)
                kinds = {POINTER}
            if len(kinds) != 1 or next(iter(kinds)) not in (DOUBLE, POINTER, INT):
                break
            words.append(next(iter(kinds)))
        else:
            return words
    return None


def word_kinds(module: Module, fn: Function, pointers: list[str], nbytes: int) -> list[set[str]]:
    """The kinds of every strong fact at each 8-byte word of `nbytes` bytes at `pointers`."""
    mt = MemoryTypes.of(module)
    ft = mt.function(fn)
    places = [p for v in pointers for p in (ft.places.get(v) or mt._global_places(v)).values()]
    strong = [f for f in mt.facts_for(fn) if f.strong]
    return [_kinds_at(strong, [_shift(p, k) for p in places], 8) if places else set()
            for k in range(0, nbytes - nbytes % 8, 8)]


def _kinds_at(facts: list[Fact], places: list[Place], size: int, weak: bool = False) -> set[str]:
    """Kinds of the facts overlapping `size` bytes at any of `places`; a float narrower than
    the access is reported as '<kind>x<n>' (an integer moving two floats)."""
    out = set()
    for f in facts:
        if f.strong == weak:
            continue
        for p in places:
            if may_overlap(p, size, f.place, f.size):
                if f.kind in (DOUBLE, FLOAT, POINTER) and f.size != size:
                    out.add(f"{f.kind}x{size // f.size}" if f.size < size else f"part of {f.kind}")
                else:
                    out.add(f.kind)
                break
    return out


def _index_steps(fn: Function | None, value: str, ty: str, where=None) -> tuple[int, int] | None:
    """A variable GEP index as (constant part, a modulus its variable part is a multiple of):
    `40*i + 32` is (32, 40), `(i << 32) >>exact 28` (a sign-extended i*16) (0, 16). None when
    nothing better than "any integer" is known."""
    if fn is None:
        return None
    found = affine_index(fn, value, ty.strip())
    const, terms = found if found is not None else (0, {("v", value): 1})
    g = 0
    for term, coeff in terms.items():
        g = math.gcd(g, coeff * _known_multiple(fn, term[1], {}, where=where))
    whole = _known_multiple(fn, value, {}, where=where)
    if whole > g and whole > 1:
        return 0, whole
    return (const, g) if g > 1 else None


def _known_multiple(fn: Function, value: str, assumed: dict, depth: int = 0, where=None) -> int:
    """A positive constant the integer `value` is always a multiple of (1: none known; 0: the
    value is 0), as LLVM's known trailing zeros and the arithmetic that made it say:
    products, shifts, exact divisions of multiples, sums, phis and selects of multiples, and
    an exact division of the value itself (`sdiv exact %d, 40`: the byte distance between
    two elements of an array of 40-byte structs, which the element count is computed from; a
    remainder would make that count poison). A phi is solved as a fixpoint: assumed any
    multiple while its incoming values are looked at, then the assumption narrowed until the
    incoming values agree with it (an induction `k += 40` from 0 is a multiple of 40;
    `k = k / 2` from 16 is no multiple of anything)."""
    c = _int_constant(value)
    if c is not None:
        return abs(c)
    if value in assumed:
        return assumed[value]
    inst = fn.defs.get(value) if value.startswith("%") else None
    if inst is None or depth > 8:
        return 1
    op = inst.opcode

    def km(v: str) -> int:
        return _known_multiple(fn, v, assumed, depth + 1, where)

    def power_part(m: int) -> int:
        return m & -m if m else 0

    out = 1
    if op == "phi":
        guess = 0
        for _ in range(4):
            assumed[value] = guess
            found = 0
            for v, _ in inst.incoming:
                found = math.gcd(found, km(v))
            if found == guess:
                break
            guess = math.gcd(guess, found) if guess else found
        else:
            guess = 1
        del assumed[value]
        out = guess
    elif op in ("add", "sub", "select"):
        vals = [inst.operands[1][1], inst.operands[2][1]] if op == "select" else [v for _, v in inst.operands]
        out = 0
        for v in vals:
            out = math.gcd(out, km(v))
        if op == "sub":
            out = max(out, _congruence(fn, vals[0], vals[1]), _pointer_distance(fn, vals[0], vals[1], where))
    elif op == "mul":
        out = km(inst.operands[0][1]) * km(inst.operands[1][1])
    elif op == "shl" and (k := _int_constant(inst.operands[1][1])) is not None and 0 <= k < 62:
        out = km(inst.operands[0][1]) << k
    elif op in ("ashr", "lshr", "sdiv", "udiv") and "exact" in inst.flags \
            and (k := _int_constant(inst.operands[1][1])) is not None and k > 0:
        d = (1 << k if k < 62 else 0) if op in ("ashr", "lshr") else k
        m = km(inst.operands[0][1])
        out = 0 if m == 0 else m // d if d and m % d == 0 else 1
    elif op == "and" and (k := _int_constant(inst.operands[1][1])) is not None:
        out = max(power_part(km(inst.operands[0][1])), power_part(k) or 1)
    elif op in ("sext", "zext"):
        out = km(inst.operands[0][1])
    elif op == "trunc":
        out = power_part(km(inst.operands[0][1]))
    d = _exact_divisor(fn, value)
    return out * d // math.gcd(out, d) if out else out


def _congruence(fn: Function, a: str, b: str) -> int:
    """A modulus a and b are known to be congruent in (0: none): each `sub x, y` whose result
    is divided exactly by d says x = y mod d (two pointers into one array of d-byte elements,
    their distance divided into an element count), and such statements chain: from
    `(m - f) /exact 16` and `(l - f) /exact 16`, `m - l` is a multiple of 16 too (std::rotate's
    `first + (middle - last)`)."""
    edges: dict[str, list[tuple[str, int]]] = {}
    for inst in fn.of_opcode("sub"):
        (_, x), (_, y) = inst.operands
        d = _exact_divisor(fn, inst.result)
        if d > 1 and x.startswith("%") and y.startswith("%"):
            edges.setdefault(x, []).append((y, d))
            edges.setdefault(y, []).append((x, d))
    if a not in edges or b not in edges:
        return 0
    best, seen, todo = 0, {a: 0}, [a]
    while todo:
        x = todo.pop()
        for y, d in edges[x]:
            g = math.gcd(seen[x], d)
            if y == b:
                best = max(best, g)
            elif y not in seen or g > seen[y] > 0:
                seen[y] = g
                todo.append(y)
    return best


def _pointer_distance(fn: Function, a: str, b: str, where) -> int:
    """A modulus of `ptrtoint x - ptrtoint y` when x and y each have one place, in one root:
    two pointers into one array of 16-byte elements are 16k bytes apart (0: unknown). `where`
    gives the places found so far (the analysis of pointers is a fixpoint: optimistic, then
    joined)."""
    if where is None:
        return 0
    px, py = _int_pointer_places(fn, a, where), _int_pointer_places(fn, b, where)
    if not px or not py or len(px) != 1 or px.keys() != py.keys():
        return 0
    (p,), (q,) = px.values(), py.values()
    g = math.gcd(p.stride, q.stride, abs(p.offset - q.offset))
    return g if g > 1 else 0


def _int_pointer_places(fn: Function, v: str, where) -> dict[str, Place] | None:
    """The places of the pointers an integer is the address of (`ptrtoint p`, or phis and
    selects of such); None when it may be something else."""
    out: dict[str, Place] = {}
    for x in merged_values(fn, v):
        d = fn.defs.get(x)
        if d is None or d.opcode != "ptrtoint" or not (places := where(d.operands[0][1])):
            return None
        for r, p in places.items():
            out[r] = _join(out[r], p) if r in out else p
    return out


def _exact_divisor(fn: Function, value: str) -> int:
    """The least common multiple of the exact divisions of `value` (1: none)."""
    out = 1
    for user in fn.users().get(value, ()):
        if user.opcode in ("sdiv", "udiv", "lshr", "ashr") and "exact" in user.flags \
                and user.operands[0][1] == value and (k := _int_constant(user.operands[1][1])):
            d = abs(k) if user.opcode in ("sdiv", "udiv") else (1 << k if 0 < k < 62 else 1)
            out = out * d // math.gcd(out, d)
    return out


def _integer_member_tag(module: Module, tag: str | None) -> bool:
    """Whether a !tbaa access tag is a struct path to an integer member (`{pair, int, 0}`:
    `p->first` of a `std::pair<int, double>`), not a scalar tag (a word copy's `long`) or a
    character (byte buffers, unions)."""
    m = re.match(r'!\{(![0-9]+),\s*(![0-9]+),\s*i64\s+\d+', module.metadata.get(tag or "", ""))
    return bool(m) and m.group(1) != m.group(2) and tbaa_type(module, tag) in _INT_TBAA - {"char"}


def _int_constant(v: str) -> int | None:
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def copy_kinds(module: Module, fn: Function) -> dict[str, set[str]]:
    """Kinds moved by each integer copy of `fn`. A function without integer values that
    only carry bytes has no copy: the analysis of its memory is not built for it."""
    if not carried_integers(fn, fn.users()):
        return {}
    return MemoryTypes.of(module).solve(fn)


def print_memory_types(module: Module, fn: Function) -> str:
    """Places of pointers, facts and the kinds each integer copy moves, for tests/debugging."""
    mt = MemoryTypes.of(module)
    ft = mt.function(fn)
    out = [f"memory types of @{fn.name}"]
    for v, places in ft.places.items():
        out.append(f"  place {v}: " + ", ".join(str(p) for p in places.values()))
    for deep, q in ft.links:
        out.append(f"  link {deep.root} = {q}")
    for f in mt.facts_for(fn):
        out.append(f"  fact {f}")
    for v, kinds in mt.solve(fn).items():
        out.append(f"  copy {v}: {'/'.join(sorted(kinds)) or 'unknown'}")
    return "\n".join(out)
