"""Finds every __enzyme_* call in a module, synthesizes the derived functions, rewrites the calls.
The engine's state lives in ad/engine.py, the call-site ABI in ad/abi.py, the text passes in
ad/passes.py; this module lowers reverse and split calls and schedules nested AD.

`differentiate_module(text, registry)` takes the module text (after instnamer) and returns
new module text. Derived functions are memoized by (function, activity per argument,
return activity, mode) so call sites share them; names are deterministic:
`diffe_<f>` (combined), `augmented_<f>` + `reverse_<f>` (split pieces), with a
`.<activity code>` suffix when a second signature of the same function is needed.
"""
from __future__ import annotations

import contextlib
import gc
import re

from ..custom.convention import cache_mask_values
from ..custom.registry import Registry, check_rule_arity
from ..errors import EnzymeBuildError
from ..ir.model import (Function, Instruction, aggregate_elements, is_float_type, make_name, parse_instruction,
                        parse_module, strip_name)
from .abi import (FORWARD_ENTRY_POINTS, Signature, describe_markers, marker_kind, parse_batch_call,
                  parse_reverse_call)
from .callsite import (bind_result, builder, call_line, clear_shadow_globals, defined_symbol, lower_batch_call,
                       shadow_linkage,
                       tape_object)
from .contexts import context_of_callee, lower_contexts
from .contexts import finish as finish_contexts
from .contexts import specialize as specialize_contexts
from .engine import Engine
from .forward import rewrite_forward_call
from .indirect import dispatch_indirect_calls, trap_unknown_callees
from .passes import (OUT_OF_LINE_MEMMOVE, LoopIds, _define_marker_global, _free_derived_names,
                     _plain_shadow_allocations, latch_rewrites, level_tape_helpers, masked_twice,
                     memmoves_out_of_line, unvectorize_masked_counters,
                     _specialize_callback_arguments, lower_threadlocal_addresses)
from .reverse import adjoint_type
from .rules import float_constant
from .shadowinit import mirrored_closure, shadow_definitions
from .tape import DECLARATIONS, TAPE_OBJECT_BYTES, TAPE_TYPE, support_closure

# ------------------------------------------------------------------------------------
# call-site rewriting


def rewrite_call(engine: Engine, fn: Function, inst: Instruction, fresh, entry_allocas) -> list[str]:
    kind = marker_kind(inst.callee)
    if kind == "__enzyme_batch":
        return lower_batch_call(parse_batch_call(engine, fn, inst, fresh), inst, fresh, entry_allocas)
    if kind in FORWARD_ENTRY_POINTS:
        return rewrite_forward_call(engine, fn, inst)
    call = parse_reverse_call(engine, fn, inst, fresh)
    primal, sig, passed, lines, where = call.primal, call.sig, call.passed, call.lines, call.head.where
    args, sret, ret_active = call.head.args, call.head.sret, sig.ret_active
    if kind in ("__enzyme_augmentfwd", "__enzyme_reverse"):
        engine.split_calls.append((kind, sig, where))
    res = inst.result
    call_ty = inst.type

    def finish(value: str | None, value_ty: str) -> None:
        bind_result(res, call_ty, value, value_ty, sret, fresh, lines, entry_allocas)

    rule = engine.custom.get(primal.name)
    if rule is not None and rule.cache_mask and rule.augment and rule.gradient:
        # its masks (custom/convention.py): in one sweep nothing runs between the augment and
        # the gradient; between __enzyme_augmentfwd and __enzyme_reverse, only the arguments
        # marked enzyme_not_overwritten stay unchanged
        kept = sig.stable_args or (False,) * len(sig.args)
        passed = passed + cache_mask_values(rule.cache_mask, [kind != "__enzyme_autodiff" and not k for k in kept],
                                            [a in ("dup", "dupnoneed") for a in sig.args])
    if rule is not None and rule.augment and rule.gradient and kind in ("__enzyme_autodiff",
                                                                        "__enzyme_augmentfwd"):
        # the function itself has a custom rule: call the user's augment and gradient
        check_rule_arity(engine.module, rule.augment, "augment", primal.name, len(passed), sig.args, where)
        check_rule_arity(engine.module, rule.gradient, "gradient", primal.name,
                         len(passed) + int(ret_active) + 1, sig.args, where)
        aug_ret = engine.function_return_type(rule.augment)
        ir = builder(fresh, lines)
        whole = ir.call(aug_ret, f"@{rule.augment}", passed, result=True)
        tape = whole
        if aug_ret != "ptr":
            tape = ir.extractvalue(aug_ret, whole, [0], "ptr")
        if kind == "__enzyme_augmentfwd":
            finish(tape, "ptr")
            return lines
        grad_args = passed + ([f"{primal.return_type} {float_constant(1.0, primal.return_type)}"]
                              if ret_active else []) + [f"ptr {tape}"]
        grad_ret = engine.function_return_type(rule.gradient)
        finish(call_line(grad_ret, rule.gradient, grad_args, fresh, lines), grad_ret)
        return lines
    if kind == "__enzyme_autodiff":
        name = engine.request_combined(primal, sig)
        rty = adjoint_type(primal, sig)
        finish(call_line(rty, name, passed, fresh, lines), rty)
        clear_shadow_globals(engine, name, fresh, lines)
        return lines
    if kind == "__enzyme_augmentsize":
        finish(str(TAPE_OBJECT_BYTES), "i64")
        return lines
    if rule is not None and rule.augment and rule.gradient and kind == "__enzyme_reverse":
        # the tape came from the user's augment: hand it to the user's gradient, untouched
        rest = [args.next() for _ in range(args.remaining())]
        if ret_active and rest:
            passed.append(f"{primal.return_type} {call.return_adjoint(rest.pop(0), fresh, lines)}")
        tape = call.tape_ptr if call.tape_ptr is not None else (rest[-1][1] if rest else "null")
        check_rule_arity(engine.module, rule.gradient, "gradient", primal.name, len(passed) + 1, sig.args, where)
        grad_ret = engine.function_return_type(rule.gradient)
        finish(call_line(grad_ret, rule.gradient, passed + ['ptr ' + tape], fresh, lines), grad_ret)
        return lines
    aug, rev = engine.request_split(primal, sig)
    if kind == "__enzyme_augmentfwd":
        tape = tape_object(engine, call.tape_ptr, call.allocated, fresh, lines, where)
        rt = primal.return_type
        wants_primal = rt != "void" and (sret is not None or call_ty not in ("ptr", "void"))
        ir = builder(fresh, lines)
        if not wants_primal:
            ir.call(rt, f"@{aug}", passed + ["ptr " + tape], result=False)
            finish(tape, "ptr")
            return lines
        # declared as returning `struct { void *tape; T primal; }` (Enzyme's shape): both
        pv = ir.call(rt, f"@{aug}", passed + ["ptr " + tape])
        elems = aggregate_elements(call_ty) if sret is None else None
        # `struct { T primal; void *tape; }` is filled by type: the tape goes where the
        # pointer is (only a pointer primal leaves the order to the positions)
        swapped = bool(elems) and len(elems) == 2 and elems[1].strip() == "ptr" \
            and elems[0].strip() != "ptr" and rt != "ptr"
        want = elems[0 if swapped else 1].strip() if elems and len(elems) == 2 else rt
        if want != rt and is_float_type(want) and is_float_type(rt):
            pv, rt = ir.cast("fptrunc" if rt == "double" else "fpext", rt, pv, want), want
        pair_ty = f"{{ {rt}, ptr }}" if swapped else f"{{ ptr, {rt} }}"
        a = ir.insertvalue(pair_ty, "poison", "ptr", tape, [1 if swapped else 0])
        b = ir.insertvalue(pair_ty, a, rt, pv, [0 if swapped else 1])
        finish(b, pair_ty)
        return lines
    # __enzyme_reverse: [return adjoint], then the tape last (or enzyme_tape, ptr anywhere after)
    rest = call.trailing()
    tape_ptr = call.tape_ptr
    if ret_active:
        if not rest:
            raise EnzymeBuildError(f"__enzyme_reverse of @{primal.name} needs the return adjoint "
                                   f"before the tape", location=where)
        passed.append(f"{primal.return_type} {call.return_adjoint(rest.pop(0), fresh, lines)}")
    owned = tape_ptr is not None
    if tape_ptr is None:
        if not rest:
            raise EnzymeBuildError("__enzyme_reverse needs the tape (from __enzyme_augmentfwd) as last argument",
                                   location=where)
        tape_ptr = rest[-1][1]
    rty = adjoint_type(primal, sig)
    v = call_line(rty, rev, passed + ['ptr ' + tape_ptr], fresh, lines)
    clear_shadow_globals(engine, rev, fresh, lines)
    engine.support.add("__enzyme_build_tape_free_data")
    ir = builder(fresh, lines)
    ir.call("void", "@__enzyme_build_tape_free_data", [("ptr", tape_ptr)])
    if owned:
        ir.store(TAPE_TYPE, "zeroinitializer", tape_ptr, align=8)
    else:
        ir.call("void", "@free", [("ptr", tape_ptr)])
        engine.declare("@free")
    finish(v, rty)
    return lines


def differentiate_module(text: str, registry: Registry | None = None, sink=None) -> str | None:
    """Rewrite every __enzyme_* call; returns the new module text (derived functions appended).

    Nested AD (a Hessian-vector product: forward over a function computing a gradient)
    works innermost first: a pass rewrites only the call sites whose function reaches no
    other __enzyme_* call; the inner site becomes a call of a derived function, which is
    plain code the next pass differentiates like any other.

    With `sink` (a binary file), the text is written there as UTF-8 instead, piece by piece
    where it can be (the last pass of a module without contexts or user shadows), so that
    the whole text is never held at once; returns None.
    """
    try:
        with _cyclic_gc_paused():
            text = _differentiate_module(text, registry, sink)
            if sink is not None and text is not None:
                sink.write(text.encode("utf-8"))
                return None
            return text
    finally:
        # the names memo holds this module's value names (up to 64k strings): a later module
        # in the same process (a build server, nested links, the test suite) shares none of
        # them and paid ~10% more on a small module for looking up in the large table
        make_name.cache_clear()


@contextlib.contextmanager
def _cyclic_gc_paused():
    """The stage builds millions of small objects that all live until it ends (the parsed
    module, analyses, emitted lines); the cyclic collector would scan them again at every
    full collection, a cost that grows with the module (a fifth of the time at 100k
    instructions). The stage makes no reference cycles (a recursive closure would: see
    analyze_activity; so would a planner holding its sweep, or an analysis memoized on the
    module it holds), so reference counting frees all of it when it returns and the
    collector, resumed, finds nothing left to scan (tests/ad/test_no_reference_cycles.py).
    A cycle would not show in a timing of the stage: the collector would scan the million
    objects it keeps alive later, at its first run after the stage."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


# Enzyme entry points left after their lowering (ad/contexts.py lowers the context API): a
# call of one is refused at its call site (otherwise the link would stop on an undefined
# symbol, with no word of ours)
UNSUPPORTED_ENTRY_POINTS = {
    "__enzyme_zero_shadows": ("zeroing the shadows of a differentiation context",
                              "pass it the value of __enzyme_context(width) made in the same function"),
}
_UNSUPPORTED_CALL = re.compile(r'\bcall\b[^@]*@"?[-a-zA-Z$._0-9]*(' + "|".join(UNSUPPORTED_ENTRY_POINTS)
                               + r')(?![a-zA-Z])')


def refuse_unsupported_entry_points(text: str, module=None) -> None:
    """A clear error for the first call of an Enzyme entry point we do not implement, and for
    the enzyme_context marker, naming the call site."""
    if "__enzyme_" not in text and "@enzyme_context" not in text:
        return
    if "@enzyme_context" not in text and (not any(name in text for name in UNSUPPORTED_ENTRY_POINTS)
                                          or _UNSUPPORTED_CALL.search(text) is None):
        return
    module = module or parse_module(text)
    from ..ir.model import source_location
    for name in module.functions:
        for inst in module.functions[name].instructions():
            if inst.opcode != "call" or not inst.callee:
                continue
            callee = strip_name(inst.callee)
            where = source_location(module, inst.metadata.get("!dbg")) or f"@{name}"
            for entry, (what, fix) in UNSUPPORTED_ENTRY_POINTS.items():
                if entry in callee and not any(e in callee for e in ("__enzyme_autodiff", "__enzyme_fwddiff")):
                    raise EnzymeBuildError(f"{entry} ({what}) needs a differentiation context "
                                           f"(called in @{name})", location=where, hint=fix)
            fn = module.functions[name]

            def is_context_marker(v: str) -> bool:
                d = fn.defs.get(v)
                return v == "@enzyme_context" or (d is not None and d.opcode == "load"
                                                  and d.operands[0][1] == "@enzyme_context")
            if marker_kind(inst.callee) and any(is_context_marker(v) for _, v in inst.operands):
                raise EnzymeBuildError(f"enzyme_context must be followed by a context made by __enzyme_context "
                                       f"in the same function (in the call to {marker_kind(inst.callee)} in @{name})",
                                       location=where, hint="void *ctx = __enzyme_context(1); then pass "
                                                            "enzyme_context, ctx to the AD call")


def lower_shadow_queries(text: str, registry: Registry | None) -> tuple[str, Registry | None]:
    """`__enzyme_shadow(&g, 1, 0)` (Enzyme's query of the shadow of a global at width 1) becomes
    the address of a zeroed global `@g$user` that is g's shadow in every mode, exactly as if g
    carried `__attribute__((enzyme_shadow(g$user)))`: reverse mode adds g's adjoint into it,
    forward mode reads g's tangent from it, and nothing clears it. Lane 0 of any width is that
    shadow; lane L > 0 of width W is `@g$user<L>`, the tangent of lane L in vector forward mode
    (what the engine would name `@g$fsh<L>`), also never cleared. The context form `__enzyme_shadow(ctx, &g, lane)` is lowered
    before (ad/contexts.py)."""
    if "__enzyme_shadow" not in text or not re.search(r'\bcall\b[^\n]*@"?[-a-zA-Z$._0-9]*__enzyme_shadow', text):
        return text, registry
    from dataclasses import replace as copy_registry

    from ..ir.model import is_active_type, source_location, take_type
    module = parse_module(text)
    lines = list(module.lines)
    shadows = dict((registry or Registry()).shadow_globals)
    added: list[str] = []
    for name in module.functions:
        for inst in module.functions[name].instructions():
            callee = strip_name(inst.callee) if inst.opcode == "call" and inst.callee else ""
            if "__enzyme_shadow" not in callee:
                continue
            where = source_location(module, inst.metadata.get("!dbg")) or f"@{name}"
            ops = inst.operands
            if len(ops) != 3 or ops[0][0] != "ptr" or ops[1][0] == "ptr":
                raise EnzymeBuildError(
                    "__enzyme_shadow(ctx, &g, lane) needs a context made by __enzyme_context in the same "
                    f"function (called in @{name})", location=where,
                    hint="void *ctx = __enzyme_context(1); double *dg = __enzyme_shadow(ctx, &g, 0); or the "
                         "shared width-1 shadow: (double *)__enzyme_shadow(&g, 1, 0)")
            width, lane = ops[1][1], ops[2][1]
            if not (re.fullmatch(r'\d+', width) and re.fullmatch(r'\d+', lane) and int(lane) < int(width)):
                raise EnzymeBuildError(
                    f"__enzyme_shadow(&g, width, lane) needs a constant width and a constant lane below it "
                    f"(got width {width}, lane {lane}, called in @{name})", location=where,
                    hint="(double *)__enzyme_shadow(&g, 1, 0), or lanes 0 and 1 of width 2")
            found = re.search(r'@("[^"]*"|[-a-zA-Z$._0-9]+)', ops[0][1])
            g = strip_name("@" + found.group(1)) if found else None
            line = module.globals.get(g, "") if g else ""
            m = re.match(r'^@(?:"[^"]*"|\S+)\s*=\s*(.*?)\bglobal\s+(.*)$', line)
            ty = take_type(m.group(2))[0] if m else None
            if ty is None or not (is_active_type(ty) or ty.startswith(("[", "{", "<{", "%"))):
                raise EnzymeBuildError(
                    f"__enzyme_shadow needs the address of a global variable holding floating-point data "
                    f"(got {ops[0][1]}, in @{name})", location=where,
                    hint="(double *)__enzyme_shadow(&g, 1, 0) for a global `double g`")
            shadow = shadows.get(g)
            if shadow is None:   # (a query of any lane makes g active, with lane 0 the user's)
                shadow = strip_name(make_name("@", g, "user"))
                shadows[g] = shadow
                added.append(f"{make_name('@', shadow)} = internal global {ty} zeroinitializer, align 16")
            if int(lane) > 0:   # lane L of vector forward mode: @g$user<L> stands for @g$fsh<L>
                shadow = strip_name(make_name("@", g, f"user{lane}"))
                if f"{make_name('@', shadow)} = " not in "\n".join(added):
                    added.append(f"{make_name('@', shadow)} = internal global {ty} zeroinitializer, align 16")
            value = re.sub(re.escape(make_name("@", g)) + r'(?![-\w$.])', make_name("@", shadow), ops[0][1])
            if inst.first_line != inst.line:
                raise EnzymeBuildError("__enzyme_shadow called through 'invoke' is not supported",
                                       location=where)
            lines[inst.first_line] = (f"  {inst.result} = getelementptr i8, ptr {value}, i64 0"
                                      if inst.result else "")
    new_registry = copy_registry(registry or Registry(), shadow_globals=shadows)
    return "\n".join(lines + added) + "\n", new_registry


INACTIVE_VALUE = "__enzyme_build_inactive_value"
_FLOAT_STORE = re.compile(r'^(\s*)store (double|float|x86_fp80|half|bfloat|fp128) (%[-a-zA-Z$._0-9]+|%"[^"]*"), '
                          r'ptr (.*)$')


def detach_inactive_global_stores(text: str, registry: Registry | None) -> tuple[str, Registry | None]:
    """A global marked inactive (`enzyme_inactive`, `__enzyme_inactive_global`) carries no
    derivative, even when a value that does is stored into it (a cache of the last x, a log):
    as in Enzyme, the store's derivative is dropped. The stored value passes through an
    identity function registered inactive, so the engine sees an inactive value stored into
    memory without a shadow; the post-AD pipeline inlines it away."""
    names = sorted((registry.inactive_globals if registry else ()), key=len, reverse=True)
    if not names or "store " not in text:
        return text, registry
    target = re.compile("(" + "|".join(re.escape(make_name("@", n)) for n in names) + r")(?![-\w$.])")
    out, used, counter = [], set(), 0
    for line in text.split("\n"):
        m = _FLOAT_STORE.match(line)
        if m and target.search(m.group(4).split(", align")[0]):
            counter += 1
            ty, value = m.group(2), m.group(3)
            detached = f"%enzyme$inactive{counter}"
            helper = make_name("@", INACTIVE_VALUE, ty)
            used.add((ty, helper))
            out.append(f"{m.group(1)}{detached} = call {ty} {helper}({ty} {value})")
            line = f"{m.group(1)}store {ty} {detached}, ptr {m.group(4)}"
        out.append(line)
    if not used:
        return text, registry
    for ty, helper in sorted(used):
        out += ["", f"define internal {ty} {helper}({ty} %x) alwaysinline {{", "entry:", f"  ret {ty} %x", "}"]
    from dataclasses import replace as copy_registry
    inactive = set(registry.inactive) | {strip_name(helper) for _, helper in used}
    return "\n".join(out) + "\n", copy_registry(registry, inactive=inactive)


def _differentiate_module(text: str, registry: Registry | None, sink=None) -> str | None:
    text, registry, contexts = lower_contexts(text, registry or Registry())
    refuse_unsupported_entry_points(text)
    text, registry = lower_shadow_queries(text, registry)
    text, registry = detach_inactive_global_stores(text, registry)
    text, module = _specialize_callback_arguments(
        lower_threadlocal_addresses(text), set((registry or Registry()).rules) | set((registry or Registry()).inactive))
    dispatched, registry = dispatch_indirect_calls(text, registry, INACTIVE_VALUE)
    if dispatched != text:
        text, module = dispatched, None
    for _ in range(16):
        module = module or parse_module(text)   # the first pass reuses the parse of the unchanged text
        with_sites = {name for name in module.functions
                      if module.functions.body_mentions(name, "__enzyme_")
                      and any(i.opcode == "call" and marker_kind(i.callee)
                              for i in module.functions[name].instructions())}
        if not with_sites:
            return finish_contexts(text, contexts)
        ready = _innermost_sites(module, with_sites)
        last = ready is None
        text, module = _differentiate_pass(module, registry, ready, contexts, sink=sink if last else None), None
        if last:
            return None if text is None else finish_contexts(text, contexts)
        text = _inline_pointer_aggregates(level_tape_helpers(_plain_shadow_allocations(_free_derived_names(text))))
    return text


def _inline_pointer_aggregates(text: str) -> str:
    """Between nested-AD passes: the pass's augmented pieces of pointer-returning functions
    return `{ ptr, ptr }` (the pointer and its shadow), a pointer inside an aggregate the next
    pass could give no shadow of its own. They are inlined into their callers, as the AD stage
    does with the program's own such functions (ad/boundaries.py), before the next pass."""
    from .boundaries import coerced_float_functions, inline_coerced_boundaries
    if not coerced_float_functions(text):
        return text
    from .. import llvm
    return inline_coerced_boundaries(llvm.parse_assembly(text, "nested"), llvm).text()


_GLOBAL_NAME = re.compile(r'@("[^"]*"|[-a-zA-Z$._0-9]+)')


def _innermost_sites(module, with_sites: set[str]):
    """(function, line) of the AD call sites whose target reaches no function with AD calls; None (= all
    sites, so recursion through an AD call is reported as before) when there is none, or
    when nothing is nested (one pass does everything)."""
    reach_cache: dict[str, bool] = {}

    def reaches_sites(name: str) -> bool:
        seen, todo = set(), [name]
        while todo:
            n = todo.pop()
            if n in seen or n not in module.functions:
                continue
            seen.add(n)
            if n in with_sites:
                return True
            for i in module.functions[n].instructions():
                if i.opcode != "call":     # a function's address taken (stored, passed on)
                    todo += [g for _, v in i.operands if "@" in v for g in _GLOBAL_NAME.findall(v)]
                elif i.callee and i.callee.startswith("@"):
                    todo.append(strip_name(i.callee))
        return False

    ready, nested = set(), False
    for name in with_sites:
        for inst in module.functions[name].instructions():
            if inst.opcode != "call" or not marker_kind(inst.callee) or not inst.operands:
                continue
            m = re.search(r'@("[^"]*"|[-a-zA-Z$._0-9]+)', inst.operands[0][1])
            target = strip_name("@" + m.group(1)) if m else None
            if target is None or target not in reach_cache:
                if target is not None:
                    reach_cache[target] = reaches_sites(target)
            if target is not None and reach_cache[target]:
                nested = True
            else:
                ready.add((name, inst.first_line))
    return ready if nested and ready else None


def _differentiate_pass(module, registry: Registry | None, ready, contexts=None, sink=None) -> str | None:
    """One rewrite of the AD call sites (all of them, or those in `ready`). With `sink`, the
    module's text is written there piece by piece when nothing rewrites it as a whole
    (user shadows), and None returned."""
    engine = Engine(module, registry or Registry())
    replace: dict[int, list[str]] = {}
    insert_after: dict[int, list[str]] = {}
    # names from an earlier pass stay taken
    counter = [max((int(n) for n in re.findall(r'%enzyme\$call(\d+)', "\n".join(module.lines))), default=0)]

    def fresh() -> str:
        counter[0] += 1
        return f"%enzyme$call{counter[0]}"

    for name in module.functions:
        if not module.functions.body_mentions(name, "__enzyme_"):
            continue
        fn = module.functions[name]
        entry_allocas: list[str] = []
        unwound: dict[str, set[str]] = {}   # landing pad -> blocks whose invoke became call + br
        continued: dict[str, list] = {}   # normal destination -> (invoking block, its continuation)
        for inst in fn.instructions():
            if inst.opcode == "call" and marker_kind(inst.callee) and (ready is None or (name, inst.first_line) in ready):
                context = context_of_callee(inst.callee)
                engine.context_call = context is not None
                engine.context_width = contexts.widths.get(context) if contexts is not None and context is not None \
                    else None
                new_lines = rewrite_call(engine, fn, inst, fresh, entry_allocas)
                engine.context_call, engine.context_width = False, None
                if context is not None:   # the context's clones of the derived functions (contexts.specialize)
                    new_lines = _to_context_clones(new_lines, engine, context)
                dbg = inst.metadata.get("!dbg")
                if dbg:  # keep the call site's location (the verifier wants it on inlinable calls)
                    new_lines = [ln + f", !dbg {dbg}" if re.match(r'\s*(%\S+\s*=\s*)?call\b', ln) else ln
                                 for ln in new_lines]
                normal = inst.invoke_normal
                if normal is not None:   # an invoke: continue to its normal destination
                    for extra in range(inst.first_line + 1, inst.line + 1):
                        replace[extra] = []
                    cont = f"{inst.block}.ad.cont{len(continued)}"
                    kept = _invoke_derived_call(new_lines, cont, inst.invoke_unwind)
                    if kept is not None:
                        # the derived function unwinds to the program's landing pad as the
                        # primal would (an exception a check throws is caught by the caller)
                        new_lines = kept
                        continued.setdefault(normal, []).append((inst.block, cont))
                    else:
                        unwound.setdefault(inst.invoke_unwind, set()).add(inst.block)
                    new_lines.append(f"  br label {make_name('%', normal)}")
                replace[inst.first_line] = new_lines
        if unwound:
            replace.update(_drop_phi_entries(module.lines, fn, unwound))
        if continued:
            for k, edited in _rename_phi_entries(module.lines, fn, continued).items():
                replace[k] = edited
        if entry_allocas:
            label_line = next(i for i in range(fn.first_line + 1, fn.last_line)
                              if module.lines[i] and not module.lines[i].startswith(" ")
                              and not module.lines[i].startswith(";"))
            insert_after[label_line] = entry_allocas
    check_split_pairs(engine.split_calls)
    # loops taking one counter modulo two powers of two stay scalar, in the program's own
    # functions as in the derived ones (passes.masked_counter_latches: an LLVM 22 vectorizer bug)
    loop_ids = LoopIds(line for line in module.lines if line.startswith("!"))
    for name in module.functions:
        if masked_twice(module.functions.body_lines(name)):
            for k, line in latch_rewrites(module.functions[name], module.lines, loop_ids).items():
                replace.setdefault(k, [line])
    out: list[str] = []
    for i, line in enumerate(module.lines):
        if i in replace:
            out.extend(replace[i])
        else:
            out.append(_define_marker_global(line))
        if i in insert_after:
            out.extend(insert_after[i])
    support_texts, support_decls = support_closure(engine.support)
    for d in support_decls:
        engine.declare(d)
    known = set(module.functions) | set(module.declarations)
    for callee, decl in sorted(engine.declarations.items()):
        if strip_name(callee) not in known:
            out.append(decl)
            known.add(strip_name(callee))
    defined = set(module.functions) | set(module.globals)
    for g in sorted(engine.shadow_globals_used):
        if g in engine.user_shadows:
            continue
        # with the shadows its initializer points at (shadowinit), unless an earlier pass made them
        for name, sh, ty in mirrored_closure(module, strip_name(g), engine.active_globals[g],
                                             lambda y: make_name("@", y, "sh")):
            if strip_name(sh) not in defined:
                defined.add(strip_name(sh))
                out.extend(shadow_definitions(module, name, sh, ty, shadow_linkage(module, name),
                                              lambda y: make_name("@", y, "sh"))[0])
    derived_texts = [unvectorize_masked_counters(memmoves_out_of_line(trap_unknown_callees(t)), loop_ids)
                     for t in engine.texts if defined_symbol(t) not in defined]
    if any(f"@{OUT_OF_LINE_MEMMOVE}(" in t for t in derived_texts):
        texts, decls = support_closure({OUT_OF_LINE_MEMMOVE} - defined)
        support_texts += texts
        for d in decls:
            if strip_name(d) not in known:
                out.append(DECLARATIONS[d])
                known.add(strip_name(d))
    out.extend(derived_texts)
    out.extend(loop_ids.lines)
    out.extend(t for t in support_texts if defined_symbol(t) not in defined)
    out.extend(engine.attribute_group_lines())
    # the parsed bodies are done with: freed before the module's text is joined, the largest
    # single piece of the stage's memory is not added to theirs
    module.functions.release()
    if sink is not None and not engine.user_shadows and not engine.user_lanes and contexts is None:
        for at in range(0, len(out), 4096):   # a few lines of text at a time, never the whole
            sink.write(("\n".join(out[at:at + 4096]) + "\n").encode("utf-8"))
        return None
    out.append("")    # the final newline, joined in (`join(out) + "\n"` would copy the module once more)
    text = _use_user_shadows("\n".join(out), engine.user_shadows, engine.user_lanes)
    if contexts is not None:
        derived = {s for s in (defined_symbol(t) for t in engine.texts) if s}
        text = specialize_contexts(text, contexts, derived, engine.active_globals)
    return text


def _to_context_clones(lines: list[str], engine: Engine, k: int) -> list[str]:
    """A context call's lowered lines, calling the context's clones of the derived functions."""
    derived = {s for s in (defined_symbol(t) for t in engine.texts) if s}
    if not derived:
        return lines
    names = {make_name("@", d): make_name("@", d + f".ctx{k}") for d in derived}   # defined_symbol: no '@'
    pattern = re.compile("(" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")(?=\()")
    return [pattern.sub(lambda m: names[m.group(1)], line) for line in lines]


def _use_user_shadows(text: str, user_shadows: dict[str, str], user_lanes: dict[tuple[str, int], str]) -> str:
    """The engine's shadow of @g (`@g$sh` in reverse mode, `@g$fsh` for forward mode's first
    lane) becomes the user's @d_g wherever a registration (`enzyme_shadow(d_g)` on g) gave one;
    `@g$fsh<L>` becomes `@g$user<L>` where the program queried lane L."""
    if not user_shadows and not user_lanes:
        return text
    names = {}
    for g, shadow in user_shadows.items():
        names[make_name("@", g, "sh")] = shadow
        names[make_name("@", g, "fsh")] = shadow
    for (g, lane), shadow in user_lanes.items():
        names[make_name("@", g, f"fsh{lane}")] = shadow
    pattern = re.compile("(" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
                         + r")(?![-\w$.])")
    if not pattern.search(text):
        return text
    lines = [line for line in text.split("\n")
             if not (line.startswith("@") and pattern.match(line) and " = " in line)]
    return pattern.sub(lambda m: names[m.group(1)], "\n".join(lines))


def check_split_pairs(calls: list[tuple[str, Signature, str]]) -> None:
    """Each __enzyme_reverse must consume a tape an __enzyme_augmentfwd with the same markers
    made: the markers choose what the tape holds, so a tape from a different specialization
    would be read with the wrong layout."""
    made: dict[str, set[Signature]] = {}
    for kind, sig, _ in calls:
        if kind == "__enzyme_augmentfwd":
            made.setdefault(sig.function, set()).add(sig)
    for kind, sig, where in calls:
        if kind != "__enzyme_reverse" or sig.function not in made or sig in made[sig.function]:
            continue
        other = sorted(made[sig.function], key=Signature.code)[0]
        raise EnzymeBuildError(
            f"this __enzyme_reverse of @{sig.function} uses the markers ({describe_markers(sig)}) but "
            f"every __enzyme_augmentfwd of it uses different ones (e.g. {describe_markers(other)}); "
            f"the tape would be read with the wrong layout",
            location=where, hint="give __enzyme_reverse exactly the markers of the __enzyme_augmentfwd "
                                 "that made its tape, enzyme_not_overwritten included")


_DERIVED_CALL = re.compile(r'^(\s*(?:%\S+\s*=\s*)?)(?:tail |notail |musttail )?call (.*@"?(?:diffe|fwddiffe|augmented|reverse)_.*?\))'
                           r'((?:\s*#\d+)?)((?:, ![-\w.]+ ![0-9]+)*)\s*$')


def _invoke_derived_call(lines: list[str], cont: str, pad: str) -> list[str] | None:
    """The lines of a rewritten AD call site with its derived-function call made an invoke
    unwinding to `pad`, the rest of the lines moved into a new block `cont`; None when the
    lines hold no such call (the site keeps a plain call then)."""
    at = next((k for k in range(len(lines) - 1, -1, -1) if _DERIVED_CALL.match(lines[k])), None)
    if at is None:
        return None
    m = _DERIVED_CALL.match(lines[at])
    invoke = f"{m.group(1)}invoke {m.group(2)}{m.group(3)} to label {make_name('%', cont)} " \
             f"unwind label {make_name('%', pad)}{m.group(4)}"
    return lines[:at] + [invoke, f"{make_name('%', cont)[1:]}:"] + lines[at + 1:]


def _rename_phi_entries(lines: list[str], fn, continued: dict[str, list]) -> dict[int, list[str]]:
    """Line edits of the phis of each normal destination in `continued`: the entries of an
    invoking block now come from its continuation block (`_invoke_derived_call`)."""
    edits: dict[int, list[str]] = {}
    for label, phis in _block_phis(lines, fn, continued):
        renamed = dict(continued[label])
        for at, phi in phis:
            if any(b in renamed for _, b in phi.incoming):
                edits[at] = [f"  {phi.result} = phi {phi.type} " + ", ".join(
                    f"[ {v}, {make_name('%', renamed.get(b, b))} ]" for v, b in phi.incoming)]
    return edits


def _block_phis(lines: list[str], fn, labels):
    """(label, [(line index, phi)]) for each block of `fn` whose label is in `labels`: the
    phis at its head, in order."""
    at = fn.first_line + 1
    while at < fn.last_line:
        line = lines[at]
        label = None
        if line and not line.startswith((" ", ";")) and ":" in line:
            label = strip_name("%" + line.split(":", 1)[0].strip())
        at += 1
        if label not in labels:
            continue
        phis = []
        while at < fn.last_line and lines[at].lstrip().startswith("%") and " = phi " in lines[at]:
            phis.append((at, parse_instruction(lines[at])))
            at += 1
        yield label, phis


def _drop_phi_entries(lines: list[str], fn, unwound: dict[str, set[str]]) -> dict[int, list[str]]:
    """Line edits removing, from the phis of each landing pad in `unwound`, the entries of
    the blocks whose `invoke` of an AD entry point became a call and a branch (the pad is
    no longer their successor). A phi left without entries (the pad is now unreachable) is
    defined as `freeze poison` right after the pad's landingpad instead."""
    edits: dict[int, list[str]] = {}
    for label, phis in _block_phis(lines, fn, unwound):
        gone, orphans = unwound[label], []
        for at, phi in phis:
            keep = [(v, b) for v, b in phi.incoming if b not in gone]
            if not keep:
                edits[at] = []
                orphans.append(f"  {phi.result} = freeze {phi.type} poison")
            elif len(keep) != len(phi.incoming):
                edits[at] = [f"  {phi.result} = phi {phi.type} " + ", ".join(
                    f"[ {v}, {make_name('%', b)} ]" for v, b in keep)]
        if orphans:   # after the landingpad (the first non-phi) and its clauses
            last = phis[-1][0] + 1   # the landingpad: the first line after the phis
            while last + 1 < fn.last_line and lines[last + 1].lstrip().startswith(("cleanup", "catch ", "filter ")):
                last += 1
            edits[last] = [lines[last]] + orphans
    return edits
