"""Addresses as affine byte offsets from a base pointer, the extent of heap blocks, and
pointers that never name the same object.

The cache planner's snapshots (ad/cache.py, `CachePlanner._snapshot_plan`) ask three
questions about the loads of a loop:

- `affine_address(fn, module, ptr)`: ptr as `base + const + sum(coeff * term)` bytes, walking
  its GEP chain (array, struct and scalar element types; indices that are constants, sums,
  differences, products and shifts by constants, and sign or zero extensions of those); the
  terms are the SSA values left over (`("v", name)`, or `("sext" | "zext", name, from_type)` for
  an extended narrower integer). None when a step is not affine.
- `allocation_extent(fn, ptr)`: the byte size of the heap block ptr points to the start of,
  when every way ptr can be reached from (phis and selects) is a `malloc`/`new` of the same
  size (an SSA value or a constant); None otherwise. With `null_ok`, ways that are the null
  pointer are allowed (`std::vector`'s storage, `n ? malloc(n) : NULL`).
- `never_same(fn, a, b, private)`: whether two pointers can never point into the same object:
  their roots are disjoint and one side's are allocations nothing outside the function can
  reach (`private`), or their bases are phis that trade places on the back edge and start
  from such pointers (ping-pong buffers: `u = next; next = old u`, over two private blocks or
  the caller's array and a private block; three buffers rotated).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir.model import Function, Module, merged_values
from .activity import pointer_roots
from .indices import _int, affine_index
from .memtypes import field_offset, type_size

_DEPTH = 12
_ALLOCATORS_BY_SIZE = {"@malloc", "@_Znwm", "@_Znam", "@_ZnwmRKSt9nothrow_t", "@_ZnamRKSt9nothrow_t"}


@dataclass(frozen=True)
class Affine:
    """`base + const + sum(coeff * term)` bytes (terms: see the module docstring)."""
    base: str
    const: int
    terms: tuple[tuple[tuple, int], ...]   # ((term, coefficient), ...), sorted, no zero coefficient

    def shifted(self, term: tuple, by: int) -> "Affine":
        """The same address with `term` replaced by `term - by`."""
        coeff = dict(self.terms).get(term, 0)
        return Affine(self.base, self.const - coeff * by, self.terms)

    def with_term(self, old: tuple, new: tuple) -> "Affine":
        """The same address with the term `old` renamed `new`."""
        terms: dict[tuple, int] = {}
        for t, c in self.terms:
            key = new if t == old else t
            terms[key] = terms.get(key, 0) + c
        return Affine(self.base, self.const, _normal(terms))


def _normal(terms: dict[tuple, int]) -> tuple[tuple[tuple, int], ...]:
    return tuple(sorted((t, c) for t, c in terms.items() if c))


def affine_address(fn: Function, module: Module | None, ptr: str, depth: int = 0) -> Affine | None:
    """`ptr` as an affine byte offset from the pointer its GEP chain starts from."""
    inst = fn.defs.get(ptr) if ptr.startswith("%") else None
    if inst is None or inst.opcode != "getelementptr" or depth > _DEPTH:
        return Affine(ptr, 0, ())
    inner = affine_address(fn, module, inst.operands[0][1], depth + 1)
    if inner is None:
        return None
    const, terms = inner.const, dict(inner.terms)
    ty = inst.source_type
    for k, (ity, idx) in enumerate(inst.operands[1:]):
        if k == 0:
            size = type_size(module, ty)
            step = affine_index(fn, idx, ity, depth + 1)
            if size is None or step is None:
                return None
        elif ty.startswith("[") or ty.startswith("<"):
            found = field_offset(module, ty, 0)
            step = affine_index(fn, idx, ity, depth + 1)
            if found is None or step is None:
                return None
            ty = found[1]
            size = type_size(module, ty)
            if size is None:
                return None
        else:   # a struct field: a constant index
            field = _int(idx)
            found = field_offset(module, ty, field) if field is not None else None
            if found is None:
                return None
            const += found[0]
            ty = found[1]
            continue
        const += size * step[0]
        for t, c in step[1].items():
            terms[t] = terms.get(t, 0) + size * c
    return Affine(inner.base, const, _normal(terms))


def allocation_extent(fn: Function, ptr: str, *, null_ok: bool = False) -> str | None:
    """The size operand (an SSA name or a constant) shared by every heap allocation `ptr` may
    be the start of; None when some way to it is not such an allocation. With `null_ok`, ways
    that are the null pointer are allowed too (a block allocated only when its size is not
    0, as `std::vector` allocates; at least one way must be an allocation): the size then
    holds only where ptr is not null."""
    leaves = merged_values(fn, ptr)
    if null_ok:
        leaves = [leaf for leaf in leaves if leaf != "null"] if leaves else leaves
    if not leaves:
        return None
    sizes = set()
    for leaf in leaves:
        inst = fn.defs.get(leaf)
        if inst is None or inst.opcode != "call" or inst.callee not in _ALLOCATORS_BY_SIZE or not inst.operands:
            return None
        sizes.add(inst.operands[0][1])
    return sizes.pop() if len(sizes) == 1 else None


def _gep_base(fn: Function, ptr: str) -> str:
    for _ in range(_DEPTH):
        inst = fn.defs.get(ptr)
        if inst is None or inst.opcode not in ("getelementptr", "bitcast"):
            return ptr
        ptr = inst.operands[0][1]
    return ptr


def _apart(fn: Function, a: str, b: str, private: set[str]) -> bool:
    # a null root names no object (nothing is read or written through it), so it is apart
    # from everything: `n ? malloc(n) : NULL` and std::vector's storage
    ra, rb = pointer_roots(fn, a) - {"null"}, pointer_roots(fn, b) - {"null"}
    return bool(ra) and bool(rb) and not ra & rb and (ra <= private or rb <= private)


def _rotated(fn: Function, p: str, q: str, private: set[str]) -> bool:
    """p and q belong to a group of phis of one block that, on every edge into it, either
    trade places among themselves (two buffers swapped, three rotated: a wave equation's
    previous, current and next states) or start from pointers pairwise apart (`_apart`): they
    never hold the same pointer."""
    a, b = fn.defs.get(p), fn.defs.get(q)
    if a is None or b is None or a.opcode != "phi" or b.opcode != "phi" or a.block != b.block or p == q:
        return False
    group, todo = {}, [a, b]
    while todo:
        phi = todo.pop()
        if phi.result in group:
            continue
        if len(group) >= 8:
            return False
        group[phi.result] = {blk: v for v, blk in phi.incoming}
        if len(group[phi.result]) != len(phi.incoming):
            return False
        for v in group[phi.result].values():
            d = fn.defs.get(v)
            if d is not None and d.opcode == "phi" and d.block == a.block:
                todo.append(d)
    edges = set(group[p])
    if any(set(inc) != edges for inc in group.values()):
        return False
    rotates = False
    for blk in edges:
        values = [inc[blk] for inc in group.values()]
        if set(values) == set(group) and len(values) == len(group):
            rotates = True   # a permutation of the group: still pairwise different
        elif not all(_apart(fn, x, y, private) for k, x in enumerate(values) for y in values[k + 1:]):
            return False
    return rotates


def never_same(fn: Function, a: str, b: str, private: set[str]) -> bool:
    """Whether pointers `a` and `b` can never point into the same object. `private` are
    allocations nothing outside the function can point to (never captured): a pointer whose
    roots are all private is apart from every pointer with other roots."""
    return _apart(fn, a, b, private) or _rotated(fn, _gep_base(fn, a), _gep_base(fn, b), private)


def _term_text(term: tuple) -> str:
    return term[1] if term[0] == "v" else f"{term[0]}({term[1]})"


def format_affine(address: Affine | None) -> str:
    """`base + const + coeff*term ...` (or `?` for an address that is not affine)."""
    if address is None:
        return "?"
    parts = [address.base] + ([str(address.const)] if address.const or not address.terms else [])
    parts += [f"{c}*{_term_text(t)}" for t, c in address.terms]
    return " + ".join(parts)


def print_addresses(fn: Function, module: Module | None = None) -> str:
    """Each load's and store's address as an affine byte offset, and each pointer the
    function allocates, with its extent."""
    out = [f"addresses of @{fn.name}"]
    for inst in fn.instructions():
        if inst.opcode in ("load", "store"):
            ptr = inst.operands[0][1] if inst.opcode == "load" else inst.operands[1][1]
            what = inst.result or "store"
            out.append(f"  {inst.block}: {inst.opcode} {what} at {format_affine(affine_address(fn, module, ptr))}")
    for inst in fn.instructions():
        if inst.opcode == "phi" and inst.type == "ptr" and (extent := allocation_extent(fn, inst.result)):
            out.append(f"  {inst.result}: a heap block of {extent} bytes")
    return "\n".join(out) + "\n"
