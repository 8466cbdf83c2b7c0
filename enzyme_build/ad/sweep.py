"""What the reverse and forward sweeps share: how a call instruction is classified, the
operand view derivative rules read, the zero of a type, and what releases a shadow block.

`classify_call` is the one decision of what a call is to the engine, in one order for every
mode. A user's custom rule comes first (it overrides every built-in treatment, as in Enzyme:
a rule given for `realloc` or for a function the engine thinks inactive is used); then
memory management (frees, allocations, memory intrinsics), whose shadows the sweeps handle
themselves; then inactive calls; then the rules table; then functions with a body.
"""
from __future__ import annotations

from typing import Callable

from ..analysis.activity import ALLOCATORS, DEALLOCATORS, callee_name, is_inactive_call, pointer_roots
from ..analysis.library import allocation_size_args, shadow_allocator
from ..ir.model import Instruction, is_float_type, is_local
from .rules import Builder, float_constant, math_rule

# what a call is: removed, a free, an allocation or memory intrinsic, a call of the user's
# rule, without derivative, differentiated by the rules table, by its derived function, or
# impossible to differentiate (an error when the sweep needs its derivative)
DROP, FREE, MEMORY, CUSTOM, INACTIVE, MATH, DERIVED, UNKNOWN = (
    "drop", "free", "memory", "custom", "inactive", "math", "derived", "unknown")

_MEMORY_INTRINSICS = ("llvm.memcpy", "llvm.memmove", "llvm.memset")


def classify_call(engine, inst: Instruction, *, mode: str, active: Callable[[], bool]) -> str:
    """The kind of a call in `mode` ("reverse" or "forward"); `active()` says whether the call
    has active operands or result (asked only when needed)."""
    name = callee_name(inst)
    if inst.callee is None:
        return UNKNOWN if active() else INACTIVE
    if name.startswith("llvm.dbg."):
        return DROP
    rule = engine.custom.get(name)
    if rule is not None and (rule.forward if mode == "forward" else True) and active():
        return CUSTOM
    if inst.callee in DEALLOCATORS:
        return FREE
    if name.startswith(_MEMORY_INTRINSICS) or inst.callee in ALLOCATORS:
        return MEMORY
    if name in engine.inactive or is_inactive_call(inst) or not active():
        return INACTIVE
    like = engine.function_like.get(name)
    if math_rule(inst.callee) or (like and math_rule("@" + like)):
        return MATH
    if mode == "forward":
        callee = engine.module.functions.get(name)
        if callee is not None and all(p.type != "..." for p in callee.params):
            return DERIVED
    elif name in engine.differentiable:
        return DERIVED
    return UNKNOWN


def mirror_node_call(engine, fn, ir, inst: Instruction, shadow_of: Callable[[str], str],
                     has_shadow: Callable[[str], bool], result: str | None) -> None:
    """A routine of a node-based container (std::map/std::set's red-black tree, std::list;
    `links_nodes` in analysis/library.py) once more, on the shadows of its pointers: the
    primal's inline code stores the shadows of the pointers it stores, and this call links
    (or walks, for `result`) the shadow nodes as the primal call does the nodes, so the
    shadow structure stays the primal's image. Only nodes this function reaches itself are
    mirrored: a pointer without a shadow, or one handed in by a caller (a helper that was not
    inlined, as with AD before optimization, where a caller's shadow of a node may not be
    one), is refused, naming the container."""
    from ..errors import EnzymeBuildError
    from .diagnostics import demangled
    params = {p.name for p in fn.params}
    args = []
    for t, v in inst.operands:
        if t == "ptr" and v not in ("null", "poison", "undef"):
            if not has_shadow(v) or pointer_roots(fn, v) & params:
                name = callee_name(inst)
                container = "std::list" if "List_node" in name else "std::map/std::set (or a multimap/multiset)"
                why = "without a shadow" if not has_shadow(v) else f"from a caller of @{fn.name}"
                raise EnzymeBuildError(
                    f"{container} nodes hold differentiated data, and {v} reaches the libstdc++ routine "
                    f"{demangled([name]).get(name, name)} {why}: its shadow nodes cannot be linked to match",
                    location=engine.location(inst),
                    hint="build and use the container inside the differentiated function with optimization "
                         "on (its routines are then inlined there), or keep the differentiated values in "
                         "an array or a std::vector")
            args.append((t, shadow_of(v)))
        else:
            args.append((t, v))
    ir.call(inst.type if inst.result else "void", inst.callee, args, name=result)


def zeroed_shadow_block(engine, ir, allocator: str, args: list[str], name: str) -> None:
    """Make `name`, the zeroed shadow of a block the program allocates with `allocator`
    (any allocator but realloc, whose shadow each mode grows its own way): a block of the
    same kind when the kind has its own allocator, else the engine's
    `__enzyme_build_shadow_alloc` of the block's size (calloc's count times size; the product
    fits, since the primal's calloc succeeded)."""
    own, _ = shadow_allocator(allocator)
    if own:
        ir.call("ptr", f"@{own}", [("i64", args[allocation_size_args(allocator)[0]])], name=name)
        return
    if allocator == "calloc":
        size = ir.binop("mul", "i64", args[0], args[1], hint="n")
    else:
        size = args[allocation_size_args(allocator)[0]]   # operator new(size, align): the size
    ir.call("ptr", "@__enzyme_build_shadow_alloc", [("i64", size)], name=name)
    engine.support.add("__enzyme_build_shadow_alloc")


def shadow_release(engine, deallocator: str | None) -> str:
    """The function that releases the shadow of a block the program frees: the block kind's
    own deallocator (`deallocator`, when its shadow was made by the same kind of allocator),
    else the engine's, which keeps large blocks in the thread's spares (ad/tape.py)."""
    if deallocator:
        engine.declare("@" + deallocator)
        return "@" + deallocator
    engine.support.add("__enzyme_build_shadow_free")
    return "@__enzyme_build_shadow_free"


def zero_of(ty: str) -> str:
    """The zero of an IR type (a float constant, or zeroinitializer)."""
    return float_constant(0.0, ty) if is_float_type(ty) else "zeroinitializer"


class RuleOperands:
    """The operands of an instruction as a derivative rule reads them (`x[i]`, `x.result`,
    `x.int_operand(i)`, `x.int_minus_one(i)`), each passed through `fetch` when read: the
    identity in forward mode, where primal values are at hand; the reverse sweep's lookup
    (so a rule that never reads an operand never caches it)."""

    def __init__(self, values: list[str], result: str | None, builder: Builder,
                 fetch: Callable[[str], str] = lambda v: v,
                 at_hand: Callable[[str], bool] = lambda v: True,
                 costless: Callable[[str], bool] = lambda v: True):
        self._values, self._result, self._b, self._fetch = values, result, builder, fetch
        self._at_hand, self._costless = at_hand, costless

    def result_at_hand(self) -> bool:
        """Whether reading the result costs nothing more: forward mode has it; the reverse
        sweep has it when the forward value is usable as it is or the block already holds it
        (a rule may then prefer it to a formula from the operands)."""
        return self._result is None or not is_local(self._result) or self._at_hand(self._result)

    def costless(self, i: int) -> bool:
        """Whether operand i can be obtained without a tape cell or cache (a constant, an
        argument, a re-read of memory nothing overwrites, an IV)."""
        v = self._values[i]
        return not is_local(v) or self._costless(v)

    def __getitem__(self, i: int) -> str:
        return self._fetch(self._values[i])

    def raw(self, i: int) -> str:
        """Operand i as the instruction spells it, not fetched: for a rule that only asks
        whether it is a constant (a local value is never read through it)."""
        return self._values[i]

    @property
    def result(self) -> str:
        return self._fetch(self._result)

    def int_operand(self, i: int) -> str:
        return self[i]

    def int_minus_one(self, i: int) -> str:
        return self._b.ir.binop("sub", "i32", self[i], "1", hint="n")
