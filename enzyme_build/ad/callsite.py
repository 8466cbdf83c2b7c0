"""Lowering a parsed AD call site: the call of a derived function, binding its result to the
original call's name (converting representation), the tape object of split mode, and the
shadow globals a top-level call leaves adjoints or tangents in. Shared by every mode.
"""
from __future__ import annotations

import re

from ..errors import EnzymeBuildError
from ..ir.builder import IRBuilder
from ..ir.model import is_float_type, make_name, strip_name
from .rules import float_constant
from .tape import TAPE_OBJECT_BYTES, TAPE_TYPE


def builder(fresh, lines: list[str]) -> IRBuilder:
    """The IR builder a call-site lowering makes its instructions with, at the end of `lines`
    (the rewritten caller is still text: printed as made); `fresh()` names the values."""
    return IRBuilder(lambda hint: fresh(), lines, text=True)


def call_line(ret_ty: str, callee: str, args: list[str], fresh, lines: list[str]) -> str | None:
    """Emit `call ret_ty @callee(args)`; returns the result's name (None for void)."""
    return builder(fresh, lines).call(ret_ty, f"@{callee}", args)


def shadow_globals_reached(engine, derived: str, forward_width: int = 0) -> dict[str, str]:
    """Shadow globals (name -> value type) that the derived function `derived` or anything it
    calls names: the ones a top-level gradient call may leave adjoints in (forward mode,
    `forward_width` > 0: the tangent globals of each lane, which hold the tangents of the
    last values written). Memoized: a derived function reaches the same globals at every
    call site that requests it."""
    key = ("shadow-globals-reached", derived, forward_width)
    if key not in engine.memo:
        engine.memo[key] = _shadow_globals_reached(engine, derived, forward_width)
    return engine.memo[key]


def _shadow_globals_reached(engine, derived: str, forward_width: int) -> dict[str, str]:
    # the user's own shadow globals (enzyme_shadow, and lanes queried with __enzyme_shadow) are
    # the user's to seed and read, like the shadow of an enzyme_dup argument: never cleared
    user = getattr(engine, "user_shadows", {})
    if forward_width:
        tags = ["fsh"] + [f"fsh{k}" for k in range(1, forward_width)]
        lanes = engine.user_lanes
        shadows = {make_name("@", g, t): ty for g, ty in engine.active_globals.items() for t in tags
                   if not (g in user and t == "fsh") and not (t != "fsh" and (g, int(t[3:])) in lanes)}
    else:
        shadows = {make_name("@", g, "sh"): engine.active_globals[g] for g in engine.shadow_globals_used
                   if g not in user}
    if not shadows:
        return {}
    bodies = {defined_symbol(t): t for t in engine.texts if t.lstrip().startswith("define")}
    symbol = re.compile(r'@("[^"]*"|[-a-zA-Z$._0-9]+)')
    found: dict[str, str] = {}
    seen, todo = set(), [derived]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in bodies:
            text = bodies[name]
        elif name in engine.module.functions:
            text = "\n".join(engine.module.functions.body_lines(name)[1:])
        else:
            continue
        for m in symbol.finditer(text):
            ref = "@" + m.group(1)
            if ref in shadows:
                found[ref] = shadows[ref]
            else:
                todo.append(strip_name(ref))
    return found


def clear_shadow_globals(engine, derived: str, fresh, lines: list[str], forward_width: int = 0) -> None:
    """After a top-level gradient call (a combined function, or a reverse piece) returns, the
    engine's shadow globals still hold the adjoints of the values the globals had before
    the call: the globals were not arguments, so those are dropped (zeroed). Otherwise the
    next gradient call's reverse sweep would consume them as its own (a static read before
    it is written, e.g. a warm start). Shadows the caller passes as arguments are untouched.
    Forward mode likewise drops the tangents left in its tangent globals: a global's value
    from before the call is a constant of the next call. A call with a differentiation
    context keeps them: they are the context's shadows, which the user reads."""
    if engine.context_call:
        return
    from .shadowinit import mirrored_closure, reset_lines
    primal_of = {}
    for g in engine.active_globals:
        for tag in ["sh", "fsh"] + [f"fsh{k}" for k in range(1, max(forward_width, 1))]:
            primal_of[make_name("@", g, tag)] = (strip_name(g), tag)
    cleared: set[str] = set()
    for shadow, ty in sorted(shadow_globals_reached(engine, derived, forward_width).items()):
        g, tag = primal_of.get(shadow, (None, None))
        # a shadow pointing at the shadows of other globals (shadowinit) is restored, and those
        # are cleared as well
        group = mirrored_closure(engine.module, g, ty, lambda y, tag=tag: make_name("@", y, tag)) if g \
            else [(None, shadow, ty)]
        for name, sh, t in group:
            if sh in cleared:
                continue
            cleared.add(sh)
            ir = builder(fresh, lines)
            if is_float_type(t):
                ir.store(t, float_constant(0.0, t), sh, align=8)
                continue
            end = ir.gep(t, "null", [("i64", "1")], flags="")
            size = ir.cast("ptrtoint", "ptr", end, "i64")
            reset = reset_lines(engine.module, name, sh, t, lambda y, tag=tag: make_name("@", y, tag), size) \
                if name else None
            if reset is not None:
                lines.extend(reset)
                for intrinsic in ("@llvm.memcpy.p0.p0.i64", "@llvm.memset.p0.i64"):
                    if any(intrinsic + "(" in line for line in reset):
                        engine.declare(intrinsic)
            else:
                ir.call("void", "@llvm.memset.p0.i64", [("ptr", sh), ("i8", "0"), ("i64", size), ("i1", "false")])
                engine.declare("@llvm.memset.p0.i64")


def tape_object(engine, tape_ptr, allocated, fresh, lines, where) -> str:
    """The tape object of an __enzyme_augmentfwd call: the caller's buffer (enzyme_tape, checked
    against enzyme_allocated), or a new one."""
    if tape_ptr is not None:
        if allocated is not None and re.fullmatch(r'-?\d+', allocated) and int(allocated) < TAPE_OBJECT_BYTES:
            raise EnzymeBuildError(
                f"enzyme_allocated gives {allocated} bytes but the tape object needs {TAPE_OBJECT_BYTES}",
                location=where, hint="size the buffer with __enzyme_augmentsize(f, ...)")
        builder(fresh, lines).store(TAPE_TYPE, "zeroinitializer", tape_ptr, align=8)
        return tape_ptr
    engine.support.add("__enzyme_build_tape_new")
    return builder(fresh, lines).call("ptr", "@__enzyme_build_tape_new", [])


def bind_result(res, call_ty, value, value_ty, sret, fresh, lines, entry_allocas) -> None:
    """Give the original call's result name the derived value, converting representation."""
    ir = builder(fresh, lines)
    if sret is not None and value is not None:
        ir.store(value_ty, value, sret, align=8)
    if res is None or call_ty == "void":
        return
    if value is None:
        ir.select("true", call_ty, "zeroinitializer", "zeroinitializer", name=res)
    elif value_ty == call_ty:
        if call_ty == "ptr":
            ir.gep("i8", value, [("i64", "0")], flags="", name=res)
        elif call_ty.startswith("i"):
            ir.binop("add", call_ty, value, "0", name=res)
        else:
            ir.select("true", call_ty, value, value, name=res)
    elif value_ty == "float" and call_ty == "double":
        ir.cast("fpext", "float", value, "double", name=res)
    elif value_ty == "double" and call_ty == "float":
        ir.cast("fptrunc", "double", value, "float", name=res)
    elif value_ty.startswith("i") and call_ty.startswith("i") and " " not in call_ty:
        op = "trunc" if int(call_ty[1:]) < int(value_ty[1:]) else "zext"
        ir.cast(op, value_ty, value, call_ty, name=res)
    else:
        tmp = builder(fresh, entry_allocas).alloca("[64 x i8]", align=16)
        ir.store("[64 x i8]", "zeroinitializer", tmp, align=16)
        ir.store(value_ty, value, tmp, align=8)
        ir.load(call_ty, tmp, align=8, name=res)



def shadow_linkage(module, g: str) -> str:
    """`internal` or `internal thread_local` for the shadow of global @g: a thread-local
    accumulator's derivative is per thread as well."""
    line = module.globals.get(strip_name(g) if g.startswith("@") else g, "")
    m = re.search(r'\b(thread_local(?:\([a-z]+\))?)', line.split("=", 1)[-1].split(" global ", 1)[0]) \
        if line else None
    return f"internal {m.group(1)}" if m else "internal"



def defined_symbol(text: str) -> str | None:
    """The name a generated global or function definition defines."""
    m = re.match(r'\s*(?:define [^@]*)?@("[^"]*"|[-a-zA-Z$._0-9]+)', text)
    return strip_name("@" + m.group(1)) if m else None


def lower_batch_call(call, inst, fresh, entry_allocas) -> list[str]:
    """__enzyme_batch: f called once per lane; the lanes' results, in order, are the call's
    result (a literal struct {T, ..., T}, bound to the struct or array the caller declared)."""
    primal, lines = call.head.primal, list(call.lines)
    rt = primal.return_type
    results = [call_line(rt, make_name("@", primal.name)[1:], lane, fresh, lines) for lane in call.lanes]
    if rt == "void":
        bind_result(inst.result, inst.type, None, "void", None, fresh, lines, entry_allocas)
        return lines
    struct = "{ " + ", ".join([rt] * call.width) + " }"
    value = "poison"
    for k, r in enumerate(results):
        value = builder(fresh, lines).insertvalue(struct, value, rt, r, [k])
    bind_result(inst.result, inst.type, value, struct, call.head.sret, fresh, lines, entry_allocas)
    return lines
