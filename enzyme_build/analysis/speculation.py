"""Speculated values: what a function computes only to be chosen, or not, by a select.

`s += r > 0 ? x / r : 0` is a select once the optimizer if-converts it, and `x / r` is then
computed whether or not it is chosen: at r = 0 it is inf. The reverse sweep gives the operand
the select did not choose a zero adjoint, and the division's rule multiplies that zero by its
partials, -x / r^2 = -inf here: 0 * inf is NaN, and the NaN reaches the gradient of r (of x),
although the program never used the value. `speculated_values(fn)` finds the values whose
every use is such a choice: a select's true or false operand (not its condition), an operand
of minnum/maxnum/fmin/fmax (the one not chosen gets a zero adjoint too), or an operand of an
instruction whose result is itself speculated (`x / r` in `t = x / r; c ? t * t : 0`). The
reverse sweep multiplies the adjoints of these values by their partials with a strong zero
(`ad/reverse.py: _apply_rule`): a zero adjoint stays zero whatever the partial is.

The same holds for a value computed before a guard and used only under it: when AD runs before
optimization (which would sink `t = 1 / x` into the guarded block or if-convert it), or when
the value has users in several guarded blocks. A use in a block that does not post-dominate
the value's own block may not run (`PostDominators`, analysis/cfg.py): the value's adjoint may
stay 0 there too.

A value used anywhere else (stored, returned, passed to a call whose result is used, compared,
read by an instruction that always runs after it) is not speculated, nor is anything only it
feeds. A phi's use counts as skippable only on edges out of blocks with one way out that may be
skipped (`u = c ? t : 1` left as branches and a phi, with AD before optimization); a loop's
phis, fed from the latch that makes the value or branches back, are not. It is a greatest fixed
point."""
from __future__ import annotations

from ..ir.model import Function, Instruction, is_float_type
from .activity import callee_name
from .cfg import PostDominators

# calls that choose one of their operands, like a select
_CHOOSING_CALLS = ("llvm.minnum.", "llvm.maxnum.", "llvm.minimum.", "llvm.maximum.", "llvm.minimumnum.",
                   "llvm.maximumnum.")
_CHOOSING_LIBM = {"fmin", "fmax", "fminf", "fmaxf", "fminl", "fmaxl"}


def _chooses_among_operands(inst: Instruction, v: str) -> bool:
    """Whether `inst` uses `v` only as an operand it may not choose."""
    if inst.opcode == "select":
        return inst.operands[0][1] != v and v in (inst.operands[1][1], inst.operands[2][1])
    if inst.opcode == "call":
        return _choosing(inst)
    return False


def _choosing(inst: Instruction) -> bool:
    name = callee_name(inst)
    return name.startswith(_CHOOSING_CALLS) or name in _CHOOSING_LIBM


def speculated_values(fn: Function) -> frozenset[str]:
    """The local values of `fn` every use of which is a choice a select (or min/max) may not
    take, or is in a block that may be skipped after the value's own block ran (one that does
    not post-dominate it: `t = 1 / x; if (x > 0.1) s += t * t;` at x = 0), directly or
    through instructions whose results are such values."""
    users = fn.users()
    if len(fn.blocks) == 1 and not fn.of_opcode("select") and not any(_choosing(c) for c in fn.of_opcode("call")):
        return frozenset()
    # floats only: adjoints flow through nothing else, and a use whose result is not a
    # candidate disqualifies (a float converted to an integer, compared, ...)
    defining: dict[str, Instruction] = {}
    for inst in fn.instructions():
        if inst.result and inst.opcode != "phi" and is_float_type(inst.type) and inst.result in users:
            defining[inst.result] = inst
    cand = set(defining)
    pdom: list[PostDominators] = []     # built on the first question

    def skipped(block: str, home: str) -> bool:
        if block == home:
            return False
        if not pdom:
            pdom.append(PostDominators(fn))
        return not pdom[0].post_dominates(block, home)

    def skippable(u: Instruction, v: str) -> bool:
        """u may not run although v's block did. A phi reads v on edges: each from a block
        with that one way out (the edge is taken whenever the block runs) that may be
        skipped after v's block; a loop's own phis (an edge from where v is made, or a
        conditional latch) are not."""
        home = defining[v].block
        if u.opcode != "phi":
            return skipped(u.block, home)
        return all(len(fn.block(b).terminator.targets) == 1 and skipped(b, home)
                   for value, b in u.incoming if value == v)

    def qualifies(v: str) -> bool:
        return all(_chooses_among_operands(u, v) or (u.result is not None and u.result in cand)
                   or skippable(u, v) for u in users.get(v, ()))

    work = list(cand)
    while work:
        v = work.pop()
        if v in cand and not qualifies(v):
            cand.discard(v)
            # what v reads may have qualified through v alone
            work.extend(x for x in defining[v].values() if x in cand)
    return frozenset(cand)


def print_speculation(fn: Function) -> str:
    """The speculated values of `fn`, one per line in program order, with the instruction that
    defines each (for tests and debugging)."""
    found = speculated_values(fn)
    lines = [f"speculated values of @{fn.name}: {len(found)}"]
    for inst in fn.instructions():
        if inst.result in found:
            lines.append(f"  {inst.result}  ({inst.opcode} in {inst.block})")
    return "\n".join(lines)
