"""Enzyme's C ABI: the entry points, the marker globals, the one Signature every mode's derived
functions are specialized by, and the parser of an __enzyme_* call site (its head, shared by
every mode, then the arguments per mode: reverse and split in `parse_reverse_call`, forward and
vector forward in `parse_forward_call`). Lowering a parsed call is the modes' business.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from ..errors import EnzymeBuildError
from ..ir.model import Function, Instruction, byval_attributes, entry_point_name, is_float_type, is_local, strip_name
from .callsite import builder

# ---------------------------------------------------------------- entry points
# a call of any function whose name contains one of these is an AD call site
ENTRY_POINTS = ("__enzyme_autodiff", "__enzyme_fwddiff", "__enzyme_augmentfwd", "__enzyme_reverse",
                "__enzyme_batch", "__enzyme_augmentsize",
                # lowered before the engine runs (ad/indirect.py), or refused with a message at
                # the call site (ad/driver.py)
                "__enzyme_virtualreverse", "__enzyme_shadow", "__enzyme_zero_shadows")
FORWARD_ENTRY_POINTS = ("__enzyme_fwddiff", "__enzyme_batch")
SPLIT_ENTRY_POINTS = ("__enzyme_augmentfwd", "__enzyme_reverse", "__enzyme_augmentsize")


def marker_kind(callee: str | None) -> str | None:
    """The entry point a callee's name contains (`@__enzyme_autodiff.site3` -> `__enzyme_autodiff`)."""
    if not callee:
        return None
    name = strip_name(callee)
    for m in ENTRY_POINTS:
        if m in name:
            return m
    return None


# ---------------------------------------------------------------- activities and markers
# activity of one parameter: reverse mode returns adjoints of OUT scalars; forward mode pairs
# each ACTIVE float with its tangents; DUP pointers come with shadows in both
OUT, ACTIVE, DUP, DUPNONEED, CONST = "out", "active", "dup", "dupnoneed", "const"
_CODES = {OUT: "o", ACTIVE: "a", DUP: "d", DUPNONEED: "n", CONST: "c"}

# marker global -> activity, per mode
REVERSE_ACTIVITY_MARKERS = {"enzyme_dup": DUP, "enzyme_dupnoneed": DUPNONEED, "enzyme_out": OUT,
                            "enzyme_const": CONST, "enzyme_dupv": "dupv", "enzyme_duplicated": DUP,
                            "enzyme_active": OUT}
FORWARD_ACTIVITY_MARKERS = {"enzyme_dup": DUP, "enzyme_duplicated": DUP, "enzyme_dupnoneed": DUPNONEED,
                            "enzyme_const": CONST}
# the caller promises the memory behind the next argument is unchanged until __enzyme_reverse
# (Enzyme's newer spelling, enzyme_nocache, "do not cache it", says the same)
NOT_OVERWRITTEN = "enzyme_not_overwritten"
NOT_OVERWRITTEN_MARKERS = (NOT_OVERWRITTEN, "enzyme_nocache")
# split mode: a caller-owned tape buffer (`enzyme_allocated, N, enzyme_tape, p`)
TAPE_MARKERS = ("enzyme_allocated", "enzyme_tape")
WIDTH_MARKERS = ("enzyme_width", "enzyme_vector")
REVERSE_ONLY_MARKERS = {"enzyme_out", "enzyme_active", "enzyme_allocated", "enzyme_tape"}


@dataclass(frozen=True)
class Signature:
    """What a derived function is specialized for, in every mode: the function, the activity
    of each parameter (reverse: OUT/DUP/DUPNONEED/CONST, forward: ACTIVE/DUP/DUPNONEED/CONST)
    and the facts of the call that change the derived code."""
    function: str
    args: tuple[str, ...]
    ret_active: bool = False   # reverse: an active float return (seeded, or its adjoint passed in)
    ret_shadow: bool = False   # a pointer return whose shadow the augmented piece returns too
    # per parameter: the caller guarantees the memory it points to does not change between
    # the augmented and the reverse piece (set only for calls from combined-mode code)
    stable_args: tuple[bool, ...] = ()
    # per parameter: the caller passes memory of its own (a local array or heap block) that no
    # other argument reaches, so writes through it cannot change what the others point to
    private_args: tuple[bool, ...] = ()
    # per parameter: a pointer to float data whose shadow the caller has only in its reverse
    # piece; the augmented piece gets poison for it (split pieces of split-mode callers)
    rev_shadow_args: tuple[bool, ...] = ()
    # globals the caller guarantees nothing but the function itself writes between the
    # augmented and the reverse piece (calls from combined-mode code, and on from pieces so
    # vouched for): the pieces may read them again instead of taping what they load
    stable_globals: frozenset = frozenset()
    mode: str = "reverse"      # "reverse" (combined and split pieces) | "forward"
    width: int = 1             # forward mode: tangents per active value

    def code(self) -> str:
        """The suffix that tells derived functions of one function apart (`diffe_f.dor`)."""
        return "".join(_CODES[a] for a in self.args) \
            + ("r" if self.ret_active else "") + ("s" if self.ret_shadow else "") \
            + ("k" + "".join("1" if x else "0" for x in self.stable_args) if any(self.stable_args) else "") \
            + ("p" + "".join("1" if x else "0" for x in self.private_args) if any(self.private_args) else "") \
            + ("v" + "".join("1" if x else "0" for x in self.rev_shadow_args) if any(self.rev_shadow_args) else "") \
            + ("g" + hashlib.sha1("\n".join(sorted(self.stable_globals)).encode()).hexdigest()[:8]
               if self.stable_globals else "") \
            + (f"w{self.width}" if self.width > 1 else "")


# ---------------------------------------------------------------- the argument walker

class CallArgs:
    """Walks the arguments of an __enzyme_* call, recognizing marker globals (passed by
    address, or loaded from their global before the stage canonicalized them)."""

    def __init__(self, fn: Function, inst: Instruction):
        self.ops = list(inst.operands)
        self.fn = fn
        self.i = 0

    def marker(self) -> str | None:
        if self.i >= len(self.ops):
            return None
        ty, v = self.ops[self.i]
        name = None
        if v.startswith("@enzyme_"):
            name = strip_name(v)
        elif is_local(v):
            d = self.fn.defs.get(v)
            if d is not None and d.opcode == "load" and d.operands[0][1].startswith("@enzyme_"):
                name = strip_name(d.operands[0][1])
        return name

    def next(self) -> tuple[str, str]:
        if self.i >= len(self.ops):
            raise IndexError
        op = self.ops[self.i]
        self.i += 1
        return op

    def remaining(self) -> int:
        return len(self.ops) - self.i


class BadArgument(EnzymeBuildError):
    """An __enzyme_* call argument whose type does not fit the parameter it lands on."""


def param_type(p) -> str:
    """A parameter's type as a call site spells it (a struct passed by value keeps `byval`)."""
    byval = byval_attributes(p)
    return f"{p.type} {byval}" if byval else p.type


def coerce_arg(want: str, have: tuple[str, str], fresh, lines) -> str:
    """The argument `have` (type, value) as a `want`: float <-> double, integer widths;
    anything else is a BadArgument."""
    ty, v = have
    if ty == want or want == "...":
        return v
    name = fresh()
    ir = builder(fresh, lines)
    if want == "float" and ty == "double":
        ir.cast("fptrunc", "double", v, "float", name=name)
    elif want == "double" and ty == "float":
        ir.cast("fpext", "float", v, "double", name=name)
    elif want.startswith("i") and ty.startswith("i"):
        wb, hb = int(want[1:]), int(ty[1:])
        ir.cast("trunc" if wb < hb else "sext", ty, v, want, name=name)
    else:
        raise BadArgument(f"an argument of type {ty} ({v}) where {want} is needed")
    return name


# ---------------------------------------------------------------- the head of a call site

@dataclass
class CallHead:
    """What every AD call site starts with: the entry point, an sret buffer, the function."""
    kind: str                  # the entry point (`__enzyme_autodiff`, ...)
    where: str                 # the call's location for messages
    args: CallArgs             # positioned after the function
    primal: Function
    sret: str | None = None    # the sret pointer the caller passed, if any
    sret_type: str | None = None


def parse_call_head(engine, fn: Function, inst: Instruction, *, kind: str, where: str, example: str) -> CallHead:
    """An `sret` result buffer, then the function to differentiate (possibly behind a cast),
    which must be defined in the program. Messages name the entry point `kind`; `example` is
    the entry point the hint shows."""
    args = CallArgs(fn, inst)
    sret = sret_type = None
    texts = inst.arg_texts
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
            location=where, hint=f"pass the function itself, e.g. {example}((void*)f, ...), and "
                                 "link the object file that defines it")
    return CallHead(kind, where, args, primal, sret, sret_type)


# ---------------------------------------------------------------- reverse and split mode

@dataclass
class ReverseCall:
    """One parsed __enzyme_autodiff / __enzyme_augmentfwd / __enzyme_reverse / __enzyme_augmentsize
    call: the derived function's arguments, and what follows them (return adjoint, tape)."""
    head: CallHead
    sig: Signature
    passed: list[str]          # 'type value' arguments of the derived function
    lines: list[str]           # conversions emitted before the call
    tape_ptr: str | None = None    # enzyme_tape: a caller-owned tape object
    allocated: str | None = None   # enzyme_allocated: its size in bytes
    keep_next: bool = field(default=False, repr=False)

    @property
    def primal(self) -> Function:
        return self.head.primal

    def split_markers(self) -> None:
        """Consume enzyme_not_overwritten / enzyme_allocated N / enzyme_tape p where they stand."""
        args, where = self.head.args, self.head.where
        while True:
            m = args.marker()
            if m in NOT_OVERWRITTEN_MARKERS:
                # the caller promises the memory behind the next argument does not change
                # between __enzyme_augmentfwd and __enzyme_reverse (combined mode assumes it)
                args.next()
                self.keep_next = True
            elif m == "enzyme_allocated":
                args.next()
                self.allocated = args.next()[1]
            elif m == "enzyme_tape":
                args.next()
                self.tape_ptr = args.next()[1]
            elif m in WIDTH_MARKERS:
                raise EnzymeBuildError(f"{m} is only supported in forward mode", location=where)
            else:
                return

    def trailing(self) -> list[tuple[str, str]]:
        """__enzyme_reverse: the arguments after the last parameter ([return adjoint], tape),
        with enzyme_allocated / enzyme_tape taken out wherever they stand."""
        rest, args = [], self.head.args
        while args.remaining():
            if args.marker() in TAPE_MARKERS:
                self.split_markers()
            else:
                rest.append(args.next())
        return rest

    def return_adjoint(self, have: tuple[str, str], fresh, lines: list[str]) -> str:
        """The return adjoint argument of __enzyme_reverse, as the primal's return type."""
        primal = self.primal
        try:
            return coerce_arg(primal.return_type, have, fresh, lines)
        except BadArgument as err:
            raise EnzymeBuildError(f"the return adjoint for @{primal.name} gets {err}", location=self.head.where,
                                   hint="__enzyme_reverse takes the arguments, then the return adjoint, then "
                                        "the tape")


def parse_reverse_call(engine, fn: Function, inst: Instruction, fresh) -> ReverseCall:
    """Read the function, then per parameter its markers (activity, enzyme_not_overwritten,
    tape markers), its value and, for dup pointers, its shadow. Defaults: a float is OUT, a
    pointer DUP, anything else CONST."""
    kind = marker_kind(inst.callee)
    head = parse_call_head(engine, fn, inst, kind=kind, where=engine.location(inst) or f"@{fn.name}",
                           example="__enzyme_autodiff")
    args, where, primal = head.args, head.where, head.primal
    call = ReverseCall(head, Signature(primal.name, ()), [], [])
    lines, passed = call.lines, call.passed
    activity, kept = [], []
    params = [p for p in primal.params if p.type != "..."]
    twin = lanes_twin(engine, primal)   # vectors of floats go lane by lane to f's twin
    try:
        for number, p in enumerate(params, 1):
            call.split_markers()
            m = args.marker()
            act = None
            if m in REVERSE_ACTIVITY_MARKERS:
                args.next()
                act = REVERSE_ACTIVITY_MARKERS[m]
                if args.marker() in NOT_OVERWRITTEN_MARKERS:   # accepted after the activity too
                    args.next()
                    call.keep_next = True
            elif m is not None:
                raise EnzymeBuildError(f"unknown marker {m} in call to {kind}", location=where)
            if twin is not None and _LANES.fullmatch(p.type) and act in (None, OUT, CONST):
                try:
                    value = coerce_arg(p.type, args.next(), fresh, lines)
                except BadArgument as err:
                    raise EnzymeBuildError(f"in the call to {kind}, parameter {number} ({p.type}) of "
                                           f"@{primal.name} gets {err}", location=where,
                                           hint="pass the struct by value, as the function takes it")
                for lane in vector_lanes(p.type, value, fresh, lines):
                    passed.append(lane)
                    activity.append(CONST if act == CONST else OUT)
                    kept.append(False)
                call.keep_next = False
                continue
            if act != CONST and _FLOAT_VECTOR.fullmatch(p.type):
                # as a constant it would silently get no derivative (the gradient read 0)
                raise EnzymeBuildError(
                    f"parameter {number} ({p.type}) of @{primal.name} is a vector of floats — e.g. a "
                    f"struct of two floats passed by value, which the ABI packs into one {p.type} "
                    f"register — and {kind} does not support it", location=where,
                    hint="pass the struct by pointer with enzyme_dup (pointer, shadow), or mark it "
                         "enzyme_const if it carries no derivative")
            if act is None:
                act = OUT if is_float_type(p.type) else DUP if p.type == "ptr" else CONST
            if act == OUT and not is_float_type(p.type):
                shape = "a pointer" if p.type == "ptr" else f"not a floating-point value ({p.type})"
                raise EnzymeBuildError(f"in the call to {kind}, enzyme_out on parameter {number} ({p.type}) "
                                       f"of @{primal.name}, which is {shape}", location=where,
                                       hint="pass pointers with enzyme_dup (the pointer, then its shadow) "
                                            "or enzyme_const" if p.type == "ptr" else
                                       "use enzyme_const for parameters that are not floating-point")
            what = f"parameter {number} ({p.type}) of @{primal.name}"
            try:
                if act in (DUP, DUPNONEED):
                    if p.type != "ptr":
                        raise EnzymeBuildError(f"enzyme_dup on non-pointer {what}", location=where,
                                               hint="use enzyme_out for scalars in reverse mode")
                    primal_v = coerce_arg(p.type, args.next(), fresh, lines)
                    shadow_v = coerce_arg("ptr", args.next(), fresh, lines)
                    passed += [f"{param_type(p)} {primal_v}", f"ptr {shadow_v}"]
                else:
                    passed.append(f"{param_type(p)} {coerce_arg(p.type, args.next(), fresh, lines)}")
            except BadArgument as err:
                hint = ("pointer parameters are enzyme_dup by default and take the pointer and then "
                        "its shadow; mark inactive pointers with enzyme_const") if p.type == "ptr" else \
                    "check the argument list against the function's parameters"
                raise EnzymeBuildError(f"in the call to {kind}, {what} ({act}) gets {err}",
                                       location=where, hint=hint)
            activity.append(act)
            kept.append(call.keep_next and p.type == "ptr")
            call.keep_next = False
        call.split_markers()
    except IndexError:
        raise EnzymeBuildError(f"too few arguments in call to {kind} for @{primal.name} "
                               f"({len(params)} parameters)", location=where)
    ret_active = is_float_type(primal.return_type)
    if kind != "__enzyme_reverse" and args.remaining():
        # (__enzyme_reverse goes on with the return adjoint and the tape: call.trailing())
        extra = args.next()
        raise EnzymeBuildError(
            f"too many arguments in the call to {kind} for @{primal.name}: it has {len(params)} "
            f"parameter{'s' if len(params) != 1 else ''}, and {extra[0]} {extra[1]} is one more",
            location=where, hint="pass one value per parameter (a pointer with enzyme_dup: the "
                                 "pointer, then its shadow); markers do not count")
    if not ret_active and primal.return_type != "void" and not any(
            act in (OUT, DUP, DUPNONEED) for act in activity):
        raise EnzymeBuildError(
            f"{kind} of @{primal.name} has nothing to differentiate: it returns "
            f"{primal.return_type} and no argument is active (no floating-point value, no "
            f"pointer with a shadow)", location=where,
            hint="differentiate a function that returns a floating-point value, or pass the "
                 "data it reads and writes through pointers marked enzyme_dup")
    split_call = kind in SPLIT_ENTRY_POINTS
    if twin is not None:
        head.primal = twin   # what is differentiated: the lanes arrive as scalars
    call.sig = Signature((twin or primal).name, tuple(activity), ret_active,
                         stable_args=tuple(kept) if split_call and any(kept) else ())
    return call


def describe_markers(sig: Signature) -> str:
    """The markers of a split-mode call as the user wrote them, for error messages."""
    kept = sig.stable_args or (False,) * len(sig.args)
    return ", ".join(("enzyme_not_overwritten " if k else "") + f"enzyme_{a}" for a, k in zip(sig.args, kept))


# ---------------------------------------------------------------- forward and vector mode

_FLOAT_VECTOR = re.compile(r"<\d+ x (?:float|double|half|bfloat)>")
LANES_SUFFIX = ".lanes"   # stage.vector_lane_entries: f's twin taking each vector lane as a scalar
_LANES = re.compile(r"<(\d+) x (float|double)>")


def lanes_twin(engine, primal: Function) -> Function | None:
    """The twin `stage.vector_lane_entries` made of a function taking vectors of floats."""
    if not any(_FLOAT_VECTOR.fullmatch(p.type) for p in primal.params):
        return None
    return engine.module.functions.get(primal.name + LANES_SUFFIX)


def vector_lanes(ty: str, value: str, fresh, lines) -> list[str]:
    """Each lane of a `<N x float|double>` value, as `T %lane` arguments."""
    m = _LANES.fullmatch(ty)
    ir = builder(fresh, lines)
    out = []
    for lane in range(int(m.group(1))):
        name = fresh()
        ir.extractelement(ty, value, "i64", str(lane), m.group(2), name=name)
        out.append(f"{m.group(2)} {name}")
    return out


@dataclass
class ForwardCall:
    """One parsed __enzyme_fwddiff call site."""
    primal: Function
    sig: Signature
    passed: list[str]       # 'type value' arguments of the derived function
    lines: list[str]        # conversions emitted before the call
    sret: str | None        # the sret pointer the caller passed, if any
    sret_type: str | None


def parse_forward_call(engine, fn: Function, inst: Instruction, fresh) -> ForwardCall:
    """Read the function, `enzyme_width N`, then per parameter its marker, value and
    tangents/shadows. Every mismatch is an error naming the call site and the parameter."""
    kind = entry_point_name(inst.callee)
    head = parse_call_head(engine, fn, inst, kind=kind, where=engine.location(inst) or f"call to {kind} in @{fn.name}",
                           example="__enzyme_fwddiff")
    args, where, primal = head.args, head.where, head.primal
    width = _parse_width(args, kind, where, engine.context_width)
    params = [p for p in primal.params if p.type != "..."]
    if len(params) != len(primal.params):
        raise EnzymeBuildError(f"{kind} of the variadic function @{primal.name} is not supported", location=where)
    lines: list[str] = []
    activity, passed = [], []
    twin = lanes_twin(engine, primal)   # vectors of floats go lane by lane to f's twin
    groups = _struct_groups(engine, primal, params)
    inside_group: set[int] = set()
    for j, p in enumerate(params, 1):
        if j - 1 in inside_group:
            continue
        if j - 1 in groups:
            group = groups[j - 1]
            inside_group.update(group)
            _parse_struct_group(args, [params[k] for k in group], j, primal, kind, where, width, fresh,
                                lines, activity, passed, lanes_twin=twin is not None)
            continue
        what = f"parameter {j} ({p.type}) of @{primal.name}"
        m = _skip_modifier(args)
        act = None
        if m in FORWARD_ACTIVITY_MARKERS:
            args.next()
            act = FORWARD_ACTIVITY_MARKERS[m]
            _skip_modifier(args)
        elif m in WIDTH_MARKERS:
            raise EnzymeBuildError(f"{m} must come right after the function (found before {what})",
                                   location=where, hint=f"write {kind}((void*)f, {m}, N, ...)")
        elif m in REVERSE_ONLY_MARKERS:
            raise EnzymeBuildError(f"{m} (before {what}) is a reverse-mode marker; {kind} is forward mode",
                                   location=where, hint="pass a float as (value, tangent) and a pointer as "
                                                        "enzyme_dup, (pointer, shadow)")
        elif m is not None:
            raise EnzymeBuildError(f"unknown marker {m} before {what} in the call to {kind}", location=where)
        if twin is not None and _LANES.fullmatch(p.type):
            value = _take(args, kind, where, f"the value of {what}")
            lanes = vector_lanes(p.type, _coerce(p.type, value, fresh, lines, where, f"the value of {what}"),
                                 fresh, lines)
            tangents = []
            if act != CONST:
                for k in range(width):
                    lane = f" {k + 1} of {width}" if width > 1 else ""
                    have = _take(args, kind, where, f"the tangent{lane} of {what}")
                    tangents.append(vector_lanes(p.type, _coerce(p.type, have, fresh, lines, where,
                                                                 f"the tangent{lane} of {what}"), fresh, lines))
            for i, value_lane in enumerate(lanes):
                passed.append(value_lane)
                passed.extend(t[i] for t in tangents)
                activity.append(CONST if act == CONST else ACTIVE)
            continue
        if act != CONST and _FLOAT_VECTOR.fullmatch(p.type):
            raise EnzymeBuildError(
                f"{what} is a vector of floats — e.g. a struct of two floats passed by value, which the "
                f"ABI packs into one {p.type} register — and forward mode does not support it",
                location=where, hint="pass the struct by pointer with enzyme_dup (pointer, shadow), or mark "
                                     "it enzyme_const if it carries no derivative")
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
    if args.marker() in WIDTH_MARKERS:
        raise EnzymeBuildError(f"{args.marker()} must come right after the function (found after the last "
                               f"parameter of @{primal.name})", location=where,
                               hint=f"write {kind}((void*)f, {args.marker()}, N, ...)")
    if args.remaining():
        extra = args.next()
        raise EnzymeBuildError(f"too many arguments in the call to {kind} for @{primal.name}: {extra[1]} is "
                               f"left over after all {len(params)} parameters", location=where,
                               hint="each float parameter takes (value, tangent), each pointer (pointer, "
                                    "shadow); enzyme_const parameters take only the value")
    primal = twin or primal   # what is differentiated: the lanes arrive as scalars
    sig = Signature(primal.name, tuple(activity), mode="forward", width=width)
    return ForwardCall(primal, sig, passed, lines, head.sret, head.sret_type)


def _struct_groups(engine, primal: Function, params) -> dict[int, tuple[int, ...]]:
    """First parameter -> the parameters that are one struct passed by value in registers
    (found in the unoptimized module, see custom.collect.struct_parameter_groups)."""
    registry = getattr(engine, "registry", None)
    entry = getattr(registry, "struct_params", {}).get(primal.name) if registry is not None else None
    if not entry or entry[0] != len(params):
        return {}
    return {group[0]: group for group in entry[1]}


def _parse_struct_group(args: CallArgs, members, j: int, primal: Function, kind: str, where: str,
                        width: int, fresh, lines: list[str], activity: list[str], passed: list[str],
                        lanes_twin: bool = False) -> None:
    """A struct the ABI split into registers: the call passes the whole value (its pieces),
    then the whole tangent per lane; the derived function takes each piece followed by
    its own tangents. With `lanes_twin` (the function's twin takes vectors lane by lane) a
    piece that is a vector of floats goes lane by lane, each lane followed by its tangents."""
    types = ", ".join(p.type for p in members)
    what = f"the struct parameter {j} (passed in registers as {types}) of @{primal.name}"
    m = args.marker()
    act = None
    if m in FORWARD_ACTIVITY_MARKERS:
        args.next()
        act = FORWARD_ACTIVITY_MARKERS[m]
    elif m is not None:
        raise EnzymeBuildError(f"the marker {m} before {what} is not supported here", location=where,
                               hint="a struct passed by value takes its value then its tangent, or "
                                    "enzyme_const and its value")
    odd = [p.type for p in members if not (is_float_type(p.type) or p.type == "ptr"
                                           or re.fullmatch(r"i\d+", p.type)
                                           or (lanes_twin and _LANES.fullmatch(p.type)))]
    if odd and act != CONST:
        raise EnzymeBuildError(f"forward mode through {what} is not supported ({odd[0]} piece)",
                               location=where, hint="pass a pointer to the struct with enzyme_dup "
                                                    "(pointer, shadow) instead")
    values = [_take(args, kind, where, f"piece {k + 1} of the value of {what}") for k in range(len(members))]
    lanes = [] if act == CONST else [
        [_take(args, kind, where, f"piece {k + 1} of the tangent{f' {lane + 1} of {width}' if width > 1 else ''} "
                                  f"of {what}") for k in range(len(members))] for lane in range(width)]
    for k, (p, value) in enumerate(zip(members, values)):
        if lanes_twin and _LANES.fullmatch(p.type):
            own = vector_lanes(p.type, _coerce(p.type, value, fresh, lines, where, f"the value of {what}"),
                               fresh, lines)
            tangents = [vector_lanes(p.type, _coerce(p.type, lane[k], fresh, lines, where,
                                                     f"the tangent of {what}"), fresh, lines) for lane in lanes]
            for i, scalar in enumerate(own):
                passed.append(scalar)
                passed.extend(t[i] for t in tangents)
                activity.append(CONST if act == CONST else ACTIVE)
            continue
        passed.append(f"{p.type} {_coerce(p.type, value, fresh, lines, where, f'the value of {what}')}")
        piece = CONST if act == CONST else ACTIVE if is_float_type(p.type) else DUP if p.type == "ptr" else CONST
        if piece != CONST:
            want = p.type if piece == ACTIVE else "ptr"
            for lane in lanes:
                passed.append(f"{want} {_coerce(want, lane[k], fresh, lines, where, f'the tangent of {what}')}")
        activity.append(piece)


def _skip_modifier(args: CallArgs) -> str | None:
    """enzyme_not_overwritten only matters to split mode's tape; forward mode reads each input
    once, as it runs, so the promise changes nothing here. Returns the marker after it."""
    if args.marker() in NOT_OVERWRITTEN_MARKERS:
        args.next()
    return args.marker()


def _parse_width(args: CallArgs, kind: str, where: str, context_width: int | None = None) -> int:
    """`enzyme_width, N` right after the function; without it 1, or for a call given a
    differentiation context, the context's width (as Enzyme infers it)."""
    if args.marker() not in WIDTH_MARKERS:
        return context_width or 1
    marker = args.marker()
    args.next()
    if args.remaining() == 0:
        raise EnzymeBuildError(f"{marker} needs a width after it", location=where)
    ty, value = args.next()
    if not re.fullmatch(r'\d+', value) or int(value) < 1:
        raise EnzymeBuildError(f"{marker} needs a positive integer constant, got {value}", location=where,
                               hint=f"write {kind}((void*)f, {marker}, 4, ...) with a literal width")
    if context_width is not None and int(value) != context_width:
        raise EnzymeBuildError(f"{marker} {value} differs from the width of the differentiation context passed "
                               f"with enzyme_context ({context_width})", location=where,
                               hint=f"make the context with __enzyme_context({value}), or leave {marker} out: "
                                    f"the context's width is used")
    return int(value)


def _coerce(want: str, have: tuple[str, str], fresh, lines, where: str, what: str) -> str:
    try:
        return coerce_arg(want, have, fresh, lines)
    except EnzymeBuildError:
        raise EnzymeBuildError(f"{what} must be {want}, got {have[0]} {have[1]}", location=where,
                               hint="check the number of tangents/shadows: enzyme_width N needs N after each "
                                    "active float and each enzyme_dup pointer") from None


def _take(args: CallArgs, kind: str, where: str, what: str) -> tuple[str, str]:
    if args.remaining() == 0:
        raise EnzymeBuildError(f"too few arguments in the call to {kind}: {what} is missing", location=where)
    m = args.marker()
    if m is not None:
        raise EnzymeBuildError(f"found the marker {m} where {what} belongs", location=where,
                               hint="check the order of markers and arguments: a marker precedes its "
                                    "parameter's value; tangents/shadows follow the value")
    return args.next()


# ---------------------------------------------------------------- batch mode

BATCH_MARKERS = ("enzyme_vector", "enzyme_scalar")


@dataclass
class BatchCall:
    """One parsed __enzyme_batch call: f evaluated on `width` lanes; per lane the arguments of
    f's call (an enzyme_vector parameter takes one value per lane, enzyme_scalar one for all)."""
    head: CallHead
    width: int
    lanes: list[list[str]]     # per lane, the 'type value' arguments of f
    lines: list[str]           # conversions emitted before the calls


def parse_batch_call(engine, fn: Function, inst: Instruction, fresh) -> BatchCall:
    """`__enzyme_batch(f, enzyme_width, N, [enzyme_vector] v1..vN | enzyme_scalar s, ...)`:
    Enzyme's batch mode. Parameters without a marker are vectors, as in Enzyme."""
    kind = "__enzyme_batch"
    where = engine.location(inst) or f"@{fn.name}"
    head = parse_call_head(engine, fn, inst, kind=kind, where=where, example=kind)
    args, primal = head.args, head.primal
    if args.marker() not in WIDTH_MARKERS:
        raise EnzymeBuildError(f"{kind} of @{primal.name} needs enzyme_width, N right after the function",
                               location=where, hint=f"{kind}((void*)f, enzyme_width, 4, enzyme_vector, x1, x2, x3, x4)")
    width = _parse_width(args, kind, where)
    lines: list[str] = []
    lanes: list[list[str]] = [[] for _ in range(width)]
    for number, p in enumerate((p for p in primal.params if p.type != "..."), 1):
        m = args.marker()
        if m in BATCH_MARKERS:
            args.next()
        elif m is not None:
            raise EnzymeBuildError(f"{m} in the call to {kind}: batch mode takes enzyme_vector or "
                                   f"enzyme_scalar before each parameter", location=where)
        what = f"parameter {number} ({p.type}) of @{primal.name}"
        count = 1 if m == "enzyme_scalar" else width
        values = [_coerce(p.type, _take(args, kind, where, f"lane {k + 1} of {what}" if count > 1 else what),
                          fresh, lines, where, what) for k in range(count)]
        for k in range(width):
            lanes[k].append(f"{param_type(p)} {values[k if count > 1 else 0]}")
    if args.remaining():
        extra = args.next()
        raise EnzymeBuildError(f"too many arguments in the call to {kind} for @{primal.name}: {extra[0]} "
                               f"{extra[1]} is one more", location=where,
                               hint="each enzyme_vector parameter takes N values, each enzyme_scalar one")
    return BatchCall(head, width, lanes, lines)
