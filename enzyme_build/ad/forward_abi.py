"""Forward-mode call sites: markers and `enzyme_width` of an __enzyme_fwddiff call, and the
ABI shapes (scalar, `{double, double}`, `<2 x float>`, sret) its result takes.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import EnzymeBuildError
from ..ir.model import entry_point_name, Function, Instruction, is_float_type, split_top, strip_name
from .driver import _CallArgs, _coerce_arg

# activity of one parameter of a forward-derived function
ACTIVE, DUP, DUPNONEED, CONST = "active", "dup", "dupnoneed", "const"
_CODES = {ACTIVE: "a", DUP: "d", DUPNONEED: "n", CONST: "c"}
_MARKER_ACTIVITY = {"enzyme_dup": DUP, "enzyme_duplicated": DUP, "enzyme_dupnoneed": DUPNONEED,
                    "enzyme_const": CONST}
_REVERSE_ONLY = {"enzyme_out", "enzyme_active", "enzyme_allocated", "enzyme_tape"}
_WIDTH_MARKERS = ("enzyme_width", "enzyme_vector")
_FLOAT_VECTOR = re.compile(r"<\d+ x (?:float|double|half|bfloat)>")


@dataclass(frozen=True)
class ForwardSignature:
    """What a forward-derived function is specialized for: activity per parameter and width."""
    function: str
    args: tuple[str, ...]   # per parameter: ACTIVE | DUP | DUPNONEED | CONST
    width: int = 1

    def code(self) -> str:
        return "".join(_CODES[a] for a in self.args) + (f"w{self.width}" if self.width > 1 else "")


@dataclass
class ForwardCall:
    """One parsed __enzyme_fwddiff call site."""
    primal: Function
    sig: ForwardSignature
    passed: list[str]       # 'type value' arguments of the derived function
    lines: list[str]        # conversions emitted before the call
    sret: str | None        # the sret pointer the caller passed, if any
    sret_type: str | None


# ------------------------------------------------------------------------------------
# parsing the call


def parse_forward_call(engine, fn: Function, inst: Instruction, fresh) -> ForwardCall:
    """Read the function, `enzyme_width N`, then per parameter its marker, value and
    tangents/shadows. Every mismatch is an error naming the call site and the parameter."""
    kind = entry_point_name(inst.callee)
    where = engine.location(inst) or f"call to {kind} in @{fn.name}"
    args = _CallArgs(fn, inst)
    sret = sret_type = None
    texts = getattr(inst, "arg_texts", None) or []
    if texts and "sret" in texts[0]:
        sret = args.next()[1]
        m = re.search(r'sret\(([^)]*)\)', texts[0])
        sret_type = m.group(1) if m else None
    if args.remaining() == 0:
        raise EnzymeBuildError(f"{kind} needs the function to differentiate as first argument", location=where)
    target = args.next()[1]
    tm = re.search(r'@("[^"]*"|[-a-zA-Z$._0-9]+)', target)
    primal = engine.module.functions.get(strip_name("@" + tm.group(1))) if tm else None
    if primal is None:
        raise EnzymeBuildError(
            f"the first argument of {kind} must be a function defined in the program (got {target})",
            location=where, hint="pass the function itself, e.g. __enzyme_fwddiff((void*)f, ...), and "
                                 "link the object file that defines it")
    width = _parse_width(args, kind, where)
    params = [p for p in primal.params if p.type != "..."]
    if len(params) != len(primal.params):
        raise EnzymeBuildError(f"{kind} of the variadic function @{primal.name} is not supported", location=where)
    lines: list[str] = []
    activity, passed = [], []
    groups = _struct_groups(engine, primal, params)
    inside_group: set[int] = set()
    for j, p in enumerate(params, 1):
        if j - 1 in inside_group:
            continue
        if j - 1 in groups:
            group = groups[j - 1]
            inside_group.update(group)
            _parse_struct_group(args, [params[k] for k in group], j, primal, kind, where, width, fresh,
                                lines, activity, passed)
            continue
        what = f"parameter {j} ({p.type}) of @{primal.name}"
        m = _skip_modifier(args)
        act = None
        if m in _MARKER_ACTIVITY:
            args.next()
            act = _MARKER_ACTIVITY[m]
            _skip_modifier(args)
        elif m in _WIDTH_MARKERS:
            raise EnzymeBuildError(f"{m} must come right after the function (found before {what})",
                                   location=where, hint=f"write {kind}((void*)f, {m}, N, ...)")
        elif m in _REVERSE_ONLY:
            raise EnzymeBuildError(f"{m} (before {what}) is a reverse-mode marker; {kind} is forward mode",
                                   location=where, hint="pass a float as (value, tangent) and a pointer as "
                                                        "enzyme_dup, (pointer, shadow)")
        elif m is not None:
            raise EnzymeBuildError(f"unknown marker {m} before {what} in the call to {kind}", location=where)
        if act != CONST and _FLOAT_VECTOR.fullmatch(p.type):
            raise EnzymeBuildError(
                f"{what} is a vector of floats — e.g. a struct of two floats passed by value, which the "
                f"ABI packs into one {p.type} register — and forward mode does not support it",
                location=where, hint=f"pass the struct by pointer with enzyme_dup (pointer, shadow), or mark "
                                     f"it enzyme_const if it carries no derivative")
        if act is None:
            act = ACTIVE if is_float_type(p.type) else DUP if p.type == "ptr" else CONST
        if act in (DUP, DUPNONEED) and is_float_type(p.type):
            act = ACTIVE    # a duplicated scalar is a (value, tangent) pair
        if act in (DUP, DUPNONEED) and p.type != "ptr":
            raise EnzymeBuildError(f"{m or 'enzyme_dup'} on {what}, which is neither a pointer nor a float",
                                   location=where, hint="integers are always constant: pass enzyme_const or "
                                                        "just the value")
        value = _take(args, kind, where, f"the value of {what}")
        passed.append(f"{p.type} {_coerce(p.type, value, fresh, lines, where, f'the value of {what}')}")
        if act != CONST:
            role = "tangent" if act == ACTIVE else "shadow"
            for k in range(width):
                lane = f" {k + 1} of {width}" if width > 1 else ""
                have = _take(args, kind, where, f"the {role}{lane} of {what}")
                want = p.type if act == ACTIVE else "ptr"
                passed.append(f"{want} {_coerce(want, have, fresh, lines, where, f'the {role}{lane} of {what}')}")
        activity.append(act)
    if args.marker() in _WIDTH_MARKERS:
        raise EnzymeBuildError(f"{args.marker()} must come right after the function (found after the last "
                               f"parameter of @{primal.name})", location=where,
                               hint=f"write {kind}((void*)f, {args.marker()}, N, ...)")
    if args.remaining():
        extra = args.next()
        raise EnzymeBuildError(f"too many arguments in the call to {kind} for @{primal.name}: {extra[1]} is "
                               f"left over after all {len(params)} parameters", location=where,
                               hint="each float parameter takes (value, tangent), each pointer (pointer, "
                                    "shadow); enzyme_const parameters take only the value")
    sig = ForwardSignature(primal.name, tuple(activity), width)
    return ForwardCall(primal, sig, passed, lines, sret, sret_type)


def _struct_groups(engine, primal: Function, params) -> dict[int, tuple[int, ...]]:
    """First parameter -> the parameters that are one struct passed by value in registers
    (found in the unoptimized module, see custom.collect.struct_parameter_groups)."""
    registry = getattr(engine, "registry", None)
    entry = getattr(registry, "struct_params", {}).get(primal.name) if registry is not None else None
    if not entry or entry[0] != len(params):
        return {}
    return {group[0]: group for group in entry[1]}


def _parse_struct_group(args: _CallArgs, members, j: int, primal: Function, kind: str, where: str,
                        width: int, fresh, lines: list[str], activity: list[str], passed: list[str]) -> None:
    """A struct the ABI split into registers: the call passes the whole value (its pieces),
    then the whole tangent per lane; the derived function takes each piece followed by
    its own tangents."""
    types = ", ".join(p.type for p in members)
    what = f"the struct parameter {j} (passed in registers as {types}) of @{primal.name}"
    m = args.marker()
    act = None
    if m in _MARKER_ACTIVITY:
        args.next()
        act = _MARKER_ACTIVITY[m]
    elif m is not None:
        raise EnzymeBuildError(f"the marker {m} before {what} is not supported here", location=where,
                               hint="a struct passed by value takes its value then its tangent, or "
                                    "enzyme_const and its value")
    odd = [p.type for p in members if not (is_float_type(p.type) or p.type == "ptr"
                                           or re.fullmatch(r"i\d+", p.type))]
    if odd and act != CONST:
        raise EnzymeBuildError(f"forward mode through {what} is not supported ({odd[0]} piece)",
                               location=where, hint="pass a pointer to the struct with enzyme_dup "
                                                    "(pointer, shadow) instead")
    values = [_take(args, kind, where, f"piece {k + 1} of the value of {what}") for k in range(len(members))]
    lanes = [] if act == CONST else [
        [_take(args, kind, where, f"piece {k + 1} of the tangent{f' {lane + 1} of {width}' if width > 1 else ''} "
                                  f"of {what}") for k in range(len(members))] for lane in range(width)]
    for k, (p, value) in enumerate(zip(members, values)):
        passed.append(f"{p.type} {_coerce(p.type, value, fresh, lines, where, f'the value of {what}')}")
        piece = CONST if act == CONST else ACTIVE if is_float_type(p.type) else DUP if p.type == "ptr" else CONST
        if piece != CONST:
            want = p.type if piece == ACTIVE else "ptr"
            for lane in lanes:
                passed.append(f"{want} {_coerce(want, lane[k], fresh, lines, where, f'the tangent of {what}')}")
        activity.append(piece)


def _skip_modifier(args: _CallArgs) -> str | None:
    """enzyme_not_overwritten only matters to split mode's tape; forward mode reads each input
    once, as it runs, so the promise changes nothing here. Returns the marker after it."""
    if args.marker() == "enzyme_not_overwritten":
        args.next()
    return args.marker()


def _parse_width(args: _CallArgs, kind: str, where: str) -> int:
    if args.marker() not in _WIDTH_MARKERS:
        return 1
    marker = args.marker()
    args.next()
    if args.remaining() == 0:
        raise EnzymeBuildError(f"{marker} needs a width after it", location=where)
    ty, value = args.next()
    if not re.fullmatch(r'\d+', value) or int(value) < 1:
        raise EnzymeBuildError(f"{marker} needs a positive integer constant, got {value}", location=where,
                               hint=f"write {kind}((void*)f, {marker}, 4, ...) with a literal width")
    return int(value)


def _coerce(want: str, have: tuple[str, str], fresh, lines, where: str, what: str) -> str:
    try:
        return _coerce_arg(want, have, fresh, lines)
    except EnzymeBuildError:
        raise EnzymeBuildError(f"{what} must be {want}, got {have[0]} {have[1]}", location=where,
                               hint="check the number of tangents/shadows: enzyme_width N needs N after each "
                                    "active float and each enzyme_dup pointer") from None


def _take(args: _CallArgs, kind: str, where: str, what: str) -> tuple[str, str]:
    if args.remaining() == 0:
        raise EnzymeBuildError(f"too few arguments in the call to {kind}: {what} is missing", location=where)
    m = args.marker()
    if m is not None:
        raise EnzymeBuildError(f"found the marker {m} where {what} belongs", location=where,
                               hint="check the order of markers and arguments: a marker precedes its "
                                    "parameter's value; tangents/shadows follow the value")
    return args.next()


# ------------------------------------------------------------------------------------
# layouts: where the scalars of an IR type live (x86-64 / SysV data layout)

_SCALAR_BYTES = {"double": 8, "float": 4, "half": 2, "bfloat": 2, "ptr": 8, "x86_fp80": 16, "fp128": 16}


def named_types(module) -> dict[str, str]:
    """'%struct.vec4' -> '{ [4 x double] }' for the module's identified struct types."""
    out = {}
    for line in module.lines:
        m = re.match(r'^(%(?:"[^"]*"|[-a-zA-Z$._0-9]+))\s*=\s*type\s+(.*)$', line)
        if m:
            out[m.group(1)] = m.group(2).strip()
    return out


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


def build_value(ty: str, named, lookup, fresh, lines, base: int = 0) -> str:
    """A value of type `ty` whose scalar at byte offset o is lookup(base + o, scalar type)."""
    full = named.get(ty.strip(), ty.strip())
    if full in _SCALAR_BYTES or re.fullmatch(r'i\d+', full):
        return lookup(base, full)
    is_vector = full.startswith("<") and not full.startswith("<{")
    value = "poison"
    for i, (ety, off) in enumerate(_element_types(full, named)):
        part = build_value(ety, named, lookup, fresh, lines, base + off)
        nxt = fresh()
        if is_vector:
            lines.append(f"  {nxt} = insertelement {ty} {value}, {ety} {part}, i32 {i}")
        else:
            lines.append(f"  {nxt} = insertvalue {ty} {value}, {ety} {part}, {i}")
        value = nxt
    return value


def value_leaves(ty: str, value: str, named, fresh, lines, base: int = 0) -> list[tuple[int, str, str]]:
    """The scalars of a value as (byte offset, scalar type, name), read with extractvalue/element."""
    full = named.get(ty.strip(), ty.strip())
    if full in _SCALAR_BYTES or re.fullmatch(r'i\d+', full):
        return [(base, full, value)]
    is_vector = full.startswith("<") and not full.startswith("<{")
    out = []
    for i, (ety, off) in enumerate(_element_types(full, named)):
        part = fresh()
        if is_vector:
            lines.append(f"  {part} = extractelement {ty} {value}, i32 {i}")
        else:
            lines.append(f"  {part} = extractvalue {ty} {value}, {i}")
        out += value_leaves(ety, part, named, fresh, lines, base + off)
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
    if not tangents:
        if res and call_ty != "void":
            lines.append(f"  {res} = select i1 true, {call_ty} zeroinitializer, {call_ty} zeroinitializer")
        return
    width = len(tangents)
    tsize, _, tleaves = layout(tangent_type, named)
    ours: dict[int, tuple[str, str]] = {}
    for k, t in enumerate(tangents):
        if len(tleaves) == 1:
            ours[k * tsize] = (tangent_type, t)
        else:
            for o, sty, name in value_leaves(tangent_type, t, named, fresh, lines, k * tsize):
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
            at = fresh()
            lines.append(f"  {at} = getelementptr inbounds i8, ptr {call.sret}, i64 {o}")
            lines.append(f"  store {sty} {name}, ptr {at}, align {min(_SCALAR_BYTES.get(sty, 8), 8)}")
        if res and call_ty != "void":
            lines.append(f"  {res} = getelementptr i8, ptr {call.sret}, i64 0")
        return
    if not res or call_ty == "void":
        return
    if width == 1 and call_ty == tangent_type:
        lines.append(f"  {res} = select i1 true, {call_ty} {tangents[0]}, {call_ty} {tangents[0]}")
        return
    if width == 1 and is_float_type(call_ty) and is_float_type(tangent_type):
        op = "fpext" if _SCALAR_BYTES[call_ty] > _SCALAR_BYTES[tangent_type] else "fptrunc"
        lines.append(f"  {res} = {op} {tangent_type} {tangents[0]} to {call_ty}")
        return
    _, _, leaves = layout(call_ty, named)
    if sorted((o, t) for o, t, _ in leaves) != sorted((o, t) for o, (t, _) in ours.items()):
        raise mismatch(call_ty)
    value = build_value(call_ty, named, lambda o, t: ours[o][1], fresh, lines)
    lines.append(f"  {res} = select i1 true, {call_ty} {value}, {call_ty} {value}")
