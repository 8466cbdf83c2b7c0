"""Iteration invariance: values a loop computes identically in every one of its iterations.

In `for (ix...) for (ik...) for (j...) ... icf[ik*s + j] ...` the address, and so the
loaded value, depends only on the inner loops' counters: iteration ix = 5 loads exactly
the same sequence of values as iteration ix = 0. The reverse sweep then needs one copy of
that sequence, not one per iteration (see `ad/cache.py`, the side table).

`iteration_invariant(fn, cfg, loop, stable_load, pure_call)` finds such values. It holds
when each iteration takes the same path through the loop, i.e. every branch that chooses
between two of the loop's own blocks tests an invariant value; a branch that can leave the
loop may test anything (the last iteration is then a prefix of the others). A value is
invariant when it is a constant, an argument, computed before the loop, or computed inside
it by a pure operation on invariant values: integer and float arithmetic, casts, GEPs,
compares, selects, phis other than the loop's own header phis (inner loops' counters
restart from invariant values), loads that `stable_load` accepts (memory nothing in the
loop writes) and calls that `pure_call` accepts. Cycles through inner loops are resolved as
a greatest fixed point: a counter `j = phi [s, pre], [j + 1, latch]` is invariant when s is.
"""
from __future__ import annotations

from typing import Callable

from ..ir.model import Function, Instruction, is_local
from .cfg import CFG, Loop

_PURE = {"add", "sub", "mul", "udiv", "sdiv", "urem", "srem", "shl", "lshr", "ashr", "and", "or",
         "xor", "fadd", "fsub", "fmul", "fdiv", "frem", "fneg", "trunc", "zext", "sext", "fptrunc",
         "fpext", "fptoui", "fptosi", "uitofp", "sitofp", "ptrtoint", "inttoptr", "bitcast",
         "addrspacecast", "getelementptr", "icmp", "fcmp", "select", "extractvalue", "insertvalue",
         "freeze", "extractelement", "insertelement", "shufflevector"}


def iteration_invariant(fn: Function, cfg: CFG, loop: Loop,
                        stable_load: Callable[[Instruction], bool],
                        pure_call: Callable[[Instruction], bool]) -> set[str] | None:
    """The results of instructions in `loop` that are the same in every iteration (in the
    same order), or None when the iterations may take different paths through the loop."""
    inside = [inst for label in cfg.in_layout_order(loop.blocks) for inst in fn.block(label).instructions]
    defined_inside = {inst.result for inst in inside if inst.result}
    cand: set[str] = set()
    for inst in inside:
        if not inst.result:
            continue
        op = inst.opcode
        if op == "phi":
            ok = inst.block != loop.header
        elif op == "load":
            ok = "volatile" not in inst.flags and "atomic" not in inst.flags and stable_load(inst)
        elif op == "call":
            ok = inst.callee is not None and pure_call(inst)
        else:
            ok = op in _PURE
        if ok:
            cand.add(inst.result)

    def invariant(v: str) -> bool:
        return not is_local(v) or v not in defined_inside or v in cand

    by_name = {inst.result: inst for inst in inside if inst.result}
    changed = True
    while changed:
        changed = False
        for name in list(cand):
            if not all(invariant(v) for v in by_name[name].values()):
                cand.discard(name)
                changed = True
    for label in loop.blocks:
        term = fn.block(label).terminator
        if term.opcode in ("invoke", "callbr", "indirectbr"):
            return None
        inner = {t for t in term.targets if t in loop.blocks}
        if term.opcode in ("br", "switch") and len(inner) > 1 and term.operands \
                and not invariant(term.operands[0][1]):
            return None
    return cand
