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
merged by a phi, read by an instruction that always runs after it) is not speculated, nor is
anything only it feeds. It is a greatest fixed point: cycles through phis are not followed (a
phi use disqualifies)."""
from __future__ import annotations

from ..ir.model import Function, Instruction
from .cfg import PostDominators

# calls that choose one of their operands, like a select
_CHOOSING_CALLS = ("llvm.minnum.", "llvm.maxnum.", "llvm.minimum.", "llvm.maximum.", "llvm.minimumnum.",
                   "llvm.maximumnum.")
_CHOOSING_LIBM = {"fmin", "fmax", "fminf", "fmaxf", "fminl", "fmaxl"}


def _chooses_among_operands(inst: Instruction, v: str) -> bool:
    """Whether `inst` uses `v` only as an operand it may not choose."""
    if inst.opcode == "select":
        return inst.operands[0][1] != v and v in (inst.operands[1][1], inst.operands[2][1])
    if inst.opcode == "call" and inst.callee_name:
        name = inst.callee_name
        return name.startswith(_CHOOSING_CALLS) or name in _CHOOSING_LIBM
    return False


def speculated_values(fn: Function) -> frozenset[str]:
    """The local values of `fn` every use of which is a choice a select (or min/max) may not
    take, or is in a block that may be skipped after the value's own block ran (one that does
    not post-dominate it: `t = 1 / x; if (x > 0.1) s += t * t;` at x = 0), directly or
    through instructions whose results are such values."""
    users = fn.users()
    if len(fn.blocks) == 1 and not fn.of_opcode("select") and not any(
            inst.callee_name and (inst.callee_name.startswith(_CHOOSING_CALLS) or inst.callee_name in _CHOOSING_LIBM)
            for inst in fn.of_opcode("call")):
        return frozenset()
    defining: dict[str, Instruction] = {}
    for inst in fn.instructions():
        if inst.result and inst.opcode != "phi":
            defining[inst.result] = inst
    cand = {v for v in defining if users.get(v)}
    pdom = PostDominators(fn) if len(fn.blocks) > 1 else None

    def skippable(u: Instruction, v: str) -> bool:
        """u may not run although v's block did (a phi's use is on an edge: not followed)."""
        home = defining[v].block
        return (pdom is not None and u.opcode != "phi" and u.block != home
                and not pdom.post_dominates(u.block, home))

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
