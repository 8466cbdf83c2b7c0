"""Integer indices as affine sums: `affine_index(fn, value, ty)` reads an index the way a GEP
does (a narrower index sign-extended) as `const + sum(coeff * term)`, through constants,
sums, differences, products and shifts by constants, and sign or zero extensions of those;
the terms are the SSA values left over (`("v", name)`, or `("sext" | "zext", name,
from_type)` for an extended narrower integer). Used by the memory type analysis (strides of
GEPs) and by `addresses` (affine byte offsets); it depends on neither.
"""
from __future__ import annotations

import re

from ..ir.model import Function

_DEPTH = 12
_INT_RE = re.compile(r"-?\d+")


def _int(value: str) -> int | None:
    return int(value) if _INT_RE.fullmatch(value.strip()) else None


def affine_index(fn: Function, value: str, ty: str, depth: int = 0) -> tuple[int, dict[tuple, int]] | None:
    """An integer index of type `ty` as (const, {term: coeff}), as a GEP reads it (a narrower
    index is sign-extended)."""
    c = _int(value)
    if c is not None:
        return c, {}
    if not value.startswith("%"):
        return None
    if depth > _DEPTH:
        return 0, {("v", value) if ty == "i64" else ("sext", value, ty): 1}
    inst = fn.defs.get(value)
    op = inst.opcode if inst is not None else ""
    if ty != "i64":
        # a narrower index: the GEP sign-extends it; an `add nsw` of a constant extends as a sum
        if op == "add" and "nsw" in inst.flags:
            return _sum(fn, inst, ty, depth, extend="sext")
        return 0, {("sext", value, ty): 1}
    if op in ("add", "sub"):
        return _sum(fn, inst, ty, depth)
    if op in ("mul", "shl"):
        (_, a), (_, b) = inst.operands
        k = _int(b) if op == "mul" else (1 << _int(b) if _int(b) is not None and 0 <= _int(b) < 62 else None)
        if k is None and op == "mul" and _int(a) is not None:
            a, k = b, _int(a)
        if k is not None:
            inner = affine_index(fn, a, ty, depth + 1)
            if inner is not None:
                return inner[0] * k, {t: v * k for t, v in inner[1].items()}
    if op in ("sext", "zext") and inst.operands:
        src_ty, src = inst.operands[0]
        flag = "nsw" if op == "sext" else "nuw"
        d = fn.defs.get(src)
        if d is not None and d.opcode == "add" and flag in d.flags:
            return _sum(fn, d, src_ty, depth, extend=op)
        return 0, {(op, src, src_ty): 1}
    return 0, {("v", value): 1}


def _sum(fn, inst, ty, depth, extend: str | None = None):
    """An add/sub of two affine operands; with `extend`, each operand of the narrower add is
    taken extended (exact when the add does not wrap in that sense)."""
    (_, a), (_, b) = inst.operands
    if extend is not None:
        parts = []
        for v in (a, b):
            c = _int(v)
            parts.append((c, {}) if c is not None else (0, {(extend, v, ty): 1}))
    else:
        parts = [affine_index(fn, v, ty, depth + 1) for v in (a, b)]
        if None in parts:
            return None
    sign = -1 if inst.opcode == "sub" else 1
    terms = dict(parts[0][1])
    for t, c in parts[1][1].items():
        terms[t] = terms.get(t, 0) + sign * c
    return parts[0][0] + sign * parts[1][0], terms
