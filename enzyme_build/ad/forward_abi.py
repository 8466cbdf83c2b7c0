"""Forward-mode results: the ABI shapes (scalar, `{double, double}`, `<2 x float>`, sret) the
result of an __enzyme_fwddiff call takes, and the x86-64 layouts that decide them. The call
site itself is parsed by ad/abi.py.
"""
from __future__ import annotations

import re

from ..errors import EnzymeBuildError
from ..ir.builder import IRBuilder
from ..ir.model import entry_point_name, Instruction, is_float_type, named_types, split_top
from .abi import ForwardCall
from .callsite import builder

# ------------------------------------------------------------------------------------
# layouts: where the scalars of an IR type live (x86-64 / SysV data layout)

_SCALAR_BYTES = {"double": 8, "float": 4, "half": 2, "bfloat": 2, "ptr": 8, "x86_fp80": 16, "fp128": 16}


def layout(ty: str, named: dict[str, str]) -> tuple[int, int, list[tuple[int, str, tuple]]]:
    """(size, alignment, leaves) of an IR type; a leaf is (byte offset, scalar type, index path)
    where the path holds ('v', i) for aggregate indices and ('e', i) for vector elements."""
    ty = ty.strip()
    if ty in named:
        return layout(named[ty], named)
    if ty in _SCALAR_BYTES:
        n = _SCALAR_BYTES[ty]
        return n, n, [(0, ty, ())]
    if re.fullmatch(r'i\d+', ty):
        n = max(1, _pow2(-(-int(ty[1:]) // 8)))
        return n, min(n, 16), [(0, ty, ())]
    m = re.fullmatch(r'<(\d+) x (.+)>', ty)
    if m and not ty.startswith("<{"):
        count, (es, _, _) = int(m.group(1)), layout(m.group(2), named)
        return count * es, _pow2(count * es), [(k * es, m.group(2).strip(), (("e", k),)) for k in range(count)]
    m = re.fullmatch(r'\[(\d+) x (.+)\]', ty)
    if m:
        count, (es, ea, el) = int(m.group(1)), layout(m.group(2), named)
        return count * es, ea, [(k * es + o, t, (("v", k),) + p) for k in range(count) for o, t, p in el]
    packed = ty.startswith("<{")
    body = ty[2:-2] if packed else ty[1:-1]
    off, align, leaves = 0, 1, []
    for i, ety in enumerate(split_top(body)):
        es, ea, el = layout(ety, named)
        if not packed:
            off = -(-off // ea) * ea
            align = max(align, ea)
        leaves += [(off + o, t, (("v", i),) + p) for o, t, p in el]
        off += es
    return -(-off // align) * align, align, leaves


def _pow2(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p


def _element_types(ty: str, named: dict[str, str]) -> list[tuple[str, int]]:
    """(element type, byte offset) of an aggregate or vector type."""
    ty = named.get(ty.strip(), ty.strip())
    m = re.fullmatch(r'<(\d+) x (.+)>', ty)
    if m and not ty.startswith("<{"):
        es = layout(m.group(2), named)[0]
        return [(m.group(2).strip(), k * es) for k in range(int(m.group(1)))]
    m = re.fullmatch(r'\[(\d+) x (.+)\]', ty)
    if m:
        es = layout(m.group(2), named)[0]
        return [(m.group(2).strip(), k * es) for k in range(int(m.group(1)))]
    packed = ty.startswith("<{")
    off, out = 0, []
    for ety in split_top(ty[2:-2] if packed else ty[1:-1]):
        es, ea, _ = layout(ety, named)
        if not packed:
            off = -(-off // ea) * ea
        out.append((ety, off))
        off += es
    return out


def build_value(ty: str, named, lookup, ir: IRBuilder, base: int = 0) -> str:
    """A value of type `ty` whose scalar at byte offset o is lookup(base + o, scalar type)."""
    full = named.get(ty.strip(), ty.strip())
    if full in _SCALAR_BYTES or re.fullmatch(r'i\d+', full):
        return lookup(base, full)
    is_vector = full.startswith("<") and not full.startswith("<{")
    value = "poison"
    for i, (ety, off) in enumerate(_element_types(full, named)):
        part = build_value(ety, named, lookup, ir, base + off)
        if is_vector:
            value = ir.insertelement(ty, value, ety, part, "i32", str(i), hint="f")
        else:
            value = ir.insertvalue(ty, value, ety, part, [i], hint="f")
    return value


def value_leaves(ty: str, value: str, named, ir: IRBuilder, base: int = 0) -> list[tuple[int, str, str]]:
    """The scalars of a value as (byte offset, scalar type, name), read with extractvalue/element."""
    full = named.get(ty.strip(), ty.strip())
    if full in _SCALAR_BYTES or re.fullmatch(r'i\d+', full):
        return [(base, full, value)]
    is_vector = full.startswith("<") and not full.startswith("<{")
    out = []
    for i, (ety, off) in enumerate(_element_types(full, named)):
        if is_vector:
            part = ir.extractelement(ty, value, "i32", str(i), ety, hint="f")
        else:
            part = ir.extractvalue(ty, value, [i], ety, hint="f")
        out += value_leaves(ety, part, named, ir, base + off)
    return out


# ------------------------------------------------------------------------------------
# binding the result


def bind_tangents(engine, call: ForwardCall, inst: Instruction, tangents: list[str], tangent_type: str | None,
                  fresh, lines: list[str], where: str) -> None:
    """Give the call's result (or its sret buffer) the N tangents of the return value.

    Supported shapes: the tangent type itself (width 1, float<->double converted); any
    struct/array/vector whose scalars, in memory order, are the N tangents one after the
    other — `{ double, double }`, `<2 x float>`, `{ <2 x float>, <2 x float> }`,
    `{ [4 x double] }` returned through an sret pointer, ..."""
    res, call_ty = inst.result, inst.type
    named = named_types(engine.module)
    ir = builder(fresh, lines)
    if not tangents:
        if res and call_ty != "void":
            ir.select("true", call_ty, "zeroinitializer", "zeroinitializer", name=res)
        return
    width = len(tangents)
    tsize, _, tleaves = layout(tangent_type, named)
    ours: dict[int, tuple[str, str]] = {}
    for k, t in enumerate(tangents):
        if len(tleaves) == 1:
            ours[k * tsize] = (tangent_type, t)
        else:
            for o, sty, name in value_leaves(tangent_type, t, named, ir, k * tsize):
                ours[o] = (sty, name)

    def mismatch(shape: str):
        return EnzymeBuildError(
            f"the call to {entry_point_name(inst.callee)} returns {shape}, which does not hold "
            f"{width} tangent{'s' if width > 1 else ''} of type {tangent_type} of @{call.primal.name}",
            location=where,
            hint=f"declare the result as the tangent type, or for enzyme_width N as a struct of N tangents, "
                 f"e.g. `typedef struct {{ {'double' if tangent_type == 'double' else tangent_type} d[{width}]; }} "
                 f"vec{width};`")

    if call.sret is not None:
        if not call.sret_type:
            raise mismatch("an sret buffer of unknown type")
        size, _, leaves = layout(call.sret_type, named)
        if sorted((o, t) for o, t, _ in leaves) != sorted((o, t) for o, (t, _) in ours.items()):
            raise mismatch(call.sret_type)
        for o, (sty, name) in sorted(ours.items()):
            at = ir.gep("i8", call.sret, [("i64", str(o))])
            ir.store(sty, name, at, align=min(_SCALAR_BYTES.get(sty, 8), 8))
        if res and call_ty != "void":
            ir.gep("i8", call.sret, [("i64", "0")], flags="", name=res)
        return
    if not res or call_ty == "void":
        return
    if width == 1 and call_ty == tangent_type:
        ir.select("true", call_ty, tangents[0], tangents[0], name=res)
        return
    if width == 1 and is_float_type(call_ty) and is_float_type(tangent_type):
        op = "fpext" if _SCALAR_BYTES[call_ty] > _SCALAR_BYTES[tangent_type] else "fptrunc"
        ir.cast(op, tangent_type, tangents[0], call_ty, name=res)
        return
    _, _, leaves = layout(call_ty, named)
    if sorted((o, t) for o, t, _ in leaves) != sorted((o, t) for o, (t, _) in ours.items()):
        raise mismatch(call_ty)
    value = build_value(call_ty, named, lambda o, t: ours[o][1], ir)
    ir.select("true", call_ty, value, value, name=res)
