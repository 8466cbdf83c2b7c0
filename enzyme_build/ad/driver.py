"""Finds every __enzyme_* call in a module, synthesizes the derived functions, rewrites the calls.

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

from ..analysis.activity import callee_name, written_float_globals
from ..analysis.effects import derivative_free
from ..custom.registry import Registry, check_rule_arity
from ..errors import EnzymeBuildError
from ..ir.model import (entry_point_name, Function, Instruction, aggregate_elements, is_float_type, make_name,
                        parse_module, strip_name)
from .abi import FORWARD_ENTRY_POINTS, Signature, describe_markers, marker_kind, parse_reverse_call
from .cache import derived_pointers, float_data_misuses, passes_reverse_only_shadow
from .callsite import (bind_result, call_line, clear_shadow_globals, defined_symbol, shadow_linkage,
                       tape_object)
from .forward import rewrite_forward_call
from .reverse import ReverseGenerator, adjoint_type
from .rules import float_constant, math_rule
from .tape import DECLARATIONS, TAPE_OBJECT_BYTES, TAPE_TYPE, support_closure

class _Inactive:
    """Registered inactive functions, plus functions whose bodies cannot affect any derivative
    (decided on first query: bodies are parsed lazily)."""

    def __init__(self, registered: set[str], module):
        self.registered, self.module, self._memo = registered, module, {}

    def __contains__(self, name) -> bool:
        return name in self.registered or derivative_free(
            self.module, name, lambda callee: math_rule(callee) is not None, self._memo)

    def __iter__(self):
        return iter(self.registered)


class _GlobalUsers:
    """Functions whose bodies (or callees') name an active global: a call of one is active
    even when no argument is (the optimizer specializes `sum(G, n)` into `sum(n)`)."""

    def __init__(self, module, active_globals):
        self.module, self.active = module, active_globals
        self._memo: dict[str, bool] = {}
        self._pattern = re.compile("(" + "|".join(re.escape(g) for g in active_globals) + r")(?![-\w$.])") \
            if active_globals else None
        self._call = re.compile(r'\bcall\b[^@]*@("[^"]+"|[-a-zA-Z$._0-9]+)\(')

    def __contains__(self, name) -> bool:
        if self._pattern is None:
            return False
        if name in self._memo:
            return self._memo[name]
        if name not in self.module.functions:
            return False
        self._memo[name] = False          # recursion: decided by the other paths
        lines = self.module.functions.body_lines(name)[1:]
        found = any("@" in line and self._pattern.search(line) for line in lines)
        if not found:
            for line in lines:
                for callee in self._call.findall(line):
                    if callee.strip('"') in self:
                        found = True
                        break
                if found:
                    break
        self._memo[name] = found
        return found


class Engine:
    """Per-module state: the IR, registrations, memo of derived functions, emitted text."""

    def __init__(self, module, registry: Registry):
        self.module = module
        self.registry = registry
        self.custom = dict(registry.rules)
        self.inactive = _Inactive(set(registry.inactive), module)
        self.function_like = dict(registry.function_like)
        self.differentiable = {n for n in module.functions if n not in self.custom and n not in self.inactive}
        self.memo: dict[tuple, dict[str, str]] = {}
        self.used_names: set[str] = set(module.functions) | set(module.declarations) | set(module.globals)
        self.texts: list[str] = []
        self.declarations: dict[str, str] = {}
        self.support: set[str] = set()
        self.chain: list[tuple[str, str | None]] = []   # (function, call location) being derived
        self.active_globals = written_float_globals(module)   # global -> value type
        self.global_users = _GlobalUsers(module, self.active_globals)
        self.shadow_globals_used: set[str] = set()
        self._returns_shadow: dict[tuple, bool] = {}
        self.split_calls: list[tuple[str, Signature, str]] = []   # (kind, signature, call site)
        # record type -> the helper that moves the adjoints of a memcpy of such records
        self.record_adjoint_helpers: dict[str, str] = {}

    # ---------------------------------------------------------------- inlining
    INLINE_PIECES_MAX = 200   # instructions of the primal

    def inline_pieces(self, fn: Function) -> bool:
        """Whether the split pieces of `fn` are marked alwaysinline: small, non-recursive
        functions. The two pieces talk through memory (tape records, shadow pointers, adjoint
        slots); inlined into their callers, O3 keeps that traffic in registers. Left to the
        inliner, a piece with two callers (a combined and a split gradient of the same
        function) stays a call and the gradient gets a third slower."""
        key = ("inline-pieces", fn.name)
        if key not in self.memo:
            small = sum(1 for _ in fn.instructions()) <= self.INLINE_PIECES_MAX
            self.memo[key] = small and not self._reaches(fn.name, fn.name)
        return self.memo[key]

    def _reaches(self, start: str, target: str) -> bool:
        """Whether @start calls @target, directly or through functions of the module."""
        seen, todo = set(), [start]
        while todo:
            name = todo.pop()
            fn = self.module.functions.get(name)
            if fn is None:
                continue
            for inst in fn.instructions():
                if inst.opcode not in ("call", "invoke"):
                    continue
                callee = callee_name(inst)
                if callee == target:
                    return True
                if callee and callee not in seen:
                    seen.add(callee)
                    todo.append(callee)
        return False

    def reverse_only_shadow(self, name: str, k: int) -> bool:
        """Whether the split pieces of @name can take parameter k's shadow in the reverse piece
        only (poison in the augmented piece): the parameter addresses float data and nothing
        else, here and in the derived callees it is passed on to."""
        key = ("reverse-only-shadow", name, k)
        if key not in self.memo:
            self.memo[key] = False   # recursion: no
            fn = self.module.functions.get(name)
            if fn is not None and name in self.differentiable and name not in self.custom \
                    and k < len(fn.params) and fn.params[k].type == "ptr":
                root = fn.params[k].name
                derived = derived_pointers(fn, {root: root})
                self.memo[key] = not float_data_misuses(
                    fn, derived, lambda inst, v: passes_reverse_only_shadow(self, inst, v))
        return self.memo[key]

    # ---------------------------------------------------------------- naming and memo
    def _unique(self, base: str, sig: Signature) -> str:
        name = make_name("@", base)[1:]
        if name in self.used_names:
            name = make_name("@", f"{base}.{sig.code()}")[1:]
        n = 1
        while name in self.used_names:
            name = make_name("@", f"{base}.{sig.code()}.{n}")[1:]
            n += 1
        self.used_names.add(name)
        return name

    def names_for(self, fn: Function, sig: Signature, split: bool) -> dict[str, str]:
        return self.memo[(sig, split)]

    def request_combined(self, fn: Function, sig: Signature) -> str:
        key = (sig, False)
        if key not in self.memo:
            self.memo[key] = {"combined": self._unique(f"diffe_{fn.name}", sig)}
            self._generate(fn, sig, split=False)
        return self.memo[key]["combined"]

    def request_split(self, fn: Function, sig: Signature, caller: str | None = None) -> tuple[str, str]:
        key = (sig, True)
        if key not in self.memo:
            self.memo[key] = {"augmented": self._unique(f"augmented_{fn.name}", sig),
                              "reverse": self._unique(f"reverse_{fn.name}", sig)}
            self._generate(fn, sig, split=True)
        names = self.memo[key]
        return names["augmented"], names["reverse"]

    def returns_shadow(self, name: str, args: tuple[str, ...], needed: bool = False) -> bool:
        """Whether `name` called with this activity returns a pointer that has a shadow.
        Recursive questions in flight are answered optimistically (True); a function whose
        returned pointer then turns out to have no shadow is refused when generated."""
        key = (name, args, needed)
        if key in self._returns_shadow:
            return self._returns_shadow[key]
        fn = self.module.functions.get(name)
        if fn is None or fn.return_type != "ptr":
            return False
        self._returns_shadow[key] = True
        from ..analysis.activity import analyze_activity
        from ..analysis.types import float_views
        act = analyze_activity(fn, list(args), defined=self.differentiable, inactive=self.inactive,
                               custom=self.custom, active_globals=set(self.active_globals),
                               views=float_views(fn, self.module), returns_shadow=self.returns_shadow,
                               ret_needs_shadow=needed, global_users=self.global_users)
        rets = [b.terminator.operands[0][1] for b in fn.blocks
                if b.terminator.opcode == "ret" and b.terminator.operands]
        answer = any(act.has_shadow(v) for v in rets)
        self._returns_shadow[key] = answer
        return answer

    def _generate(self, fn: Function, sig: Signature, split: bool) -> None:
        self.chain.append((fn.name, None))
        try:
            self.texts.extend(ReverseGenerator(self, fn, sig, split).generate())
        finally:
            self.chain.pop()

    # ---------------------------------------------------------------- declarations and errors
    def declare(self, callee: str, decl: str | None = None) -> None:
        self.declarations[callee] = decl or DECLARATIONS[callee]

    def location(self, inst: Instruction | None) -> str | None:
        from ..ir.model import source_location
        if inst is None:
            return None
        return source_location(self.module, inst.metadata.get("!dbg"))

    def location_of_function(self, fn: Function) -> str:
        from ..ir.model import source_location
        return source_location(self.module, fn.dbg) or f"@{fn.name}"

    def function_return_type(self, name: str) -> str:
        fn = self.module.functions.get(name)
        if fn:
            return fn.return_type
        decl = self.module.declarations.get(name, "")
        m = re.match(r'declare\s+(?:\S+\s+)*?(\S+|\{[^}]*\})\s+@', decl)
        return m.group(1) if m else "ptr"

    def missing_derivative(self, inst: Instruction, fn: Function, partial_rule: bool = False,
                           mode: str = "reverse") -> None:
        if inst.callee and marker_kind(inst.callee):
            raise EnzymeBuildError(
                f"@{fn.name} calls {entry_point_name(inst.callee)}: differentiating a function that itself "
                f"differentiates (e.g. reverse over reverse for Hessians) is not supported",
                location=self.location(inst) or f"@{fn.name}",
                hint="compute the inner derivative by hand (or with finite differences), or give the "
                     "inner function a custom derivative rule")
        if inst.callee is None and re.search(r'\basm\b', inst.text.split("(", 1)[0]):
            chain = " -> ".join([c for c, _ in self.chain])
            raise EnzymeBuildError(
                f"cannot differentiate through inline assembly with active operands (call chain: {chain})",
                location=self.location(inst) or f"@{fn.name}",
                hint="move the assembly into a function with a custom derivative rule, or mark that "
                     "function inactive if it does not affect derivatives")
        if inst.callee is None:
            chain = " -> ".join([c for c, _ in self.chain])
            origin = _function_pointer_origin(fn, inst)
            raise EnzymeBuildError(
                f"cannot differentiate through an indirect call (function pointer or virtual call) "
                f"with active arguments (call chain: {chain} -> ?)" + (f": the function pointer is {origin}"
                                                                       if origin else ""),
                location=self.location(inst) or f"@{fn.name}",
                hint="call the function directly (or let the optimizer devirtualize it, e.g. with a "
                     "final class), or mark the data it touches enzyme_const" + (
                         "; a callback passed as an argument of the differentiated function itself (enzyme_const "
                         "and the function's name) is specialized, and so is one stored in a struct the "
                         "program fills with a known function before calling (differentiate that wrapper)"
                         if origin else ""))
        raw_callee = strip_name(inst.callee)
        names = demangled([c for c, _ in self.chain] + [raw_callee, fn.name])
        callee = names.get(raw_callee, raw_callee)
        chain = " -> ".join(names.get(c, c) for c in [c for c, _ in self.chain] + [raw_callee])
        where = self.location(inst) or f"@{names.get(fn.name, fn.name)}"
        if raw_callee.startswith("llvm."):
            raise EnzymeBuildError(
                f"cannot differentiate the LLVM intrinsic '{raw_callee}' with active operands (call chain: {chain})",
                location=where, hint="this construct is not supported by the AD engine; move it into a function "
                                     "with a custom derivative rule, or keep it away from active data")
        what = "has only part of a custom rule (augment and gradient are both needed)" if partial_rule \
            else "has no body and no derivative rule"
        # C++: a rule is named by a plain identifier, the function by its qualified name
        ident = re.sub(r"\W", "_", callee.split("(", 1)[0].split("::")[-1]) if raw_callee.startswith("_Z") else callee
        ref = f"(void*){callee.split('(', 1)[0]}" if raw_callee.startswith("_Z") else callee
        ext = 'extern "C" ' if raw_callee.startswith("_Z") else ""
        on_decl = f" on the declaration of {callee.split('(', 1)[0]}" if raw_callee.startswith("_Z") else ""
        if mode == "forward":
            raise EnzymeBuildError(
                f"cannot differentiate through '{callee}': it {what} (call chain: {chain})",
                location=where,
                hint=f"give it a forward rule, e.g. __attribute__((enzyme(\"forward\", {ident}_fwd))){on_decl} or a "
                     f"global `{ext}void* __enzyme_register_derivative_{ident}[] = {{{ref}, (void*){ident}_fwd}};` "
                     f"where {ident}_fwd takes each argument followed by its tangent and returns "
                     f"`struct {{ double primal, tangent; }}` — or, if it does not affect derivatives, mark it "
                     f"inactive: `{ext}void* __enzyme_inactivefn[] = {{{ref}}};`")
        raise EnzymeBuildError(
            f"cannot differentiate through '{callee}': it {what} (call chain: {chain})",
            location=where,
            hint=f"give it a custom rule, e.g. __attribute__((enzyme(\"augment\", {ident}_aug))) and "
                 f"__attribute__((enzyme(\"gradient\", {ident}_grad))){on_decl} or a global "
                 f"`{ext}void* __enzyme_register_gradient_{ident}[] = {{{ref}, (void*){ident}_aug, (void*){ident}_grad}};`"
                 f" — or, if it does not affect derivatives, mark it inactive: "
                 f"`{ext}void* __enzyme_inactivefn[] = {{{ref}}};`")


def _function_pointer_origin(fn: Function, inst: Instruction) -> str | None:
    """Where an indirect call's target comes from, in the user's terms, when it is a
    parameter or is loaded from memory a parameter points to."""
    from ..analysis.activity import pointer_roots
    m = re.search(r'\bcall\b[^%(]*?(%[-a-zA-Z$._0-9]+)\(', inst.text)
    if m is None:
        return None
    params = {p.name: k for k, p in enumerate(fn.params, 1)}
    value = m.group(1)
    if value in params:
        return f"parameter {params[value]} of {fn.name}"
    d = fn.defs.get(value)
    if d is None or d.opcode != "load" or not d.operands:
        return None
    for root in sorted(pointer_roots(fn, d.operands[0][1])):
        if root in params:
            return f"loaded from memory that parameter {params[root]} of {fn.name} points to (e.g. a struct of callbacks)"
    return None


def demangled(names: list[str]) -> dict[str, str]:
    """C++ names as the user wrote them (`_ZN3sim8blackboxEd` -> `sim::blackbox(double)`), for
    messages; through llvm-cxxfilt (or c++filt), names unchanged when neither is there."""
    import shutil
    import subprocess
    mangled = sorted({n for n in names if n.startswith("_Z")})
    tool = next((t for t in ("llvm-cxxfilt-22", "/usr/lib/llvm-22/bin/llvm-cxxfilt", "llvm-cxxfilt", "c++filt")
                 if shutil.which(t)), None)
    if not mangled or tool is None:
        return {}
    try:
        proc = subprocess.run([tool], input="\n".join(mangled) + "\n", capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return {}
    out = proc.stdout.splitlines()
    return dict(zip(mangled, out)) if proc.returncode == 0 and len(out) == len(mangled) else {}


# ------------------------------------------------------------------------------------
# call-site rewriting


def rewrite_call(engine: Engine, fn: Function, inst: Instruction, fresh, entry_allocas) -> list[str]:
    kind = marker_kind(inst.callee)
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
    if rule is not None and rule.augment and rule.gradient and kind in ("__enzyme_autodiff",
                                                                        "__enzyme_augmentfwd"):
        # the function itself has a custom rule: call the user's augment and gradient
        check_rule_arity(engine.module, rule.augment, "augment", primal.name, len(passed), sig.args, where)
        check_rule_arity(engine.module, rule.gradient, "gradient", primal.name,
                         len(passed) + int(ret_active) + 1, sig.args, where)
        aug_ret = engine.function_return_type(rule.augment)
        whole = fresh()
        lines.append(f"  {whole} = call {aug_ret} @{rule.augment}({', '.join(passed)})")
        tape = whole
        if aug_ret != "ptr":
            tape = fresh()
            lines.append(f"  {tape} = extractvalue {aug_ret} {whole}, 0")
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
        if not wants_primal:
            lines.append(f"  call {rt} @{aug}({', '.join(passed + ['ptr ' + tape])})")
            finish(tape, "ptr")
            return lines
        # declared as returning `struct { void *tape; T primal; }` (Enzyme's shape): both
        pv = fresh()
        lines.append(f"  {pv} = call {rt} @{aug}({', '.join(passed + ['ptr ' + tape])})")
        elems = aggregate_elements(call_ty) if sret is None else None
        want = elems[1].strip() if elems and len(elems) == 2 else rt
        if want != rt and is_float_type(want) and is_float_type(rt):
            conv = fresh()
            op = "fptrunc" if rt == "double" else "fpext"
            lines.append(f"  {conv} = {op} {rt} {pv} to {want}")
            pv, rt = conv, want
        pair_ty = f"{{ ptr, {rt} }}"
        a, b = fresh(), fresh()
        lines.append(f"  {a} = insertvalue {pair_ty} poison, ptr {tape}, 0")
        lines.append(f"  {b} = insertvalue {pair_ty} {a}, {rt} {pv}, 1")
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
    lines.append(f"  call void @__enzyme_build_tape_free_data(ptr {tape_ptr})")
    if owned:
        lines.append(f"  store {TAPE_TYPE} zeroinitializer, ptr {tape_ptr}, align 8")
    else:
        lines.append(f"  call void @free(ptr {tape_ptr})")
        engine.declare("@free")
    finish(v, rty)
    return lines


def differentiate_module(text: str, registry: Registry | None = None) -> str:
    """Rewrite every __enzyme_* call; returns the new module text (derived functions appended).

    Nested AD (a Hessian-vector product: forward over a function computing a gradient)
    works innermost first: a pass rewrites only the call sites whose function reaches no
    other __enzyme_* call; the inner site becomes a call of a derived function, which is
    plain code the next pass differentiates like any other.
    """
    with _cyclic_gc_paused():
        return _differentiate_module(text, registry)


@contextlib.contextmanager
def _cyclic_gc_paused():
    """The stage builds millions of small objects that all live until it ends (the parsed
    module, analyses, emitted lines); the cyclic collector would scan them again at every
    full collection, a cost that grows with the module (a fifth of the time at 100k
    instructions). The stage makes no reference cycles (a recursive closure would: see
    analyze_activity), so reference counting frees all of it when it returns and the
    collector, resumed, finds nothing left to scan."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _differentiate_module(text: str, registry: Registry | None) -> str:
    text, module = _specialize_callback_arguments(
        lower_threadlocal_addresses(text), set((registry or Registry()).rules) | set((registry or Registry()).inactive))
    for _ in range(16):
        module = module or parse_module(text)   # the first pass reuses the parse of the unchanged text
        with_sites = {name for name in module.functions
                      if any("__enzyme_" in line for line in module.functions.body_lines(name)[1:])
                      and any(i.opcode == "call" and marker_kind(i.callee)
                              for i in module.functions[name].instructions())}
        if not with_sites:
            return text
        ready = _innermost_sites(module, with_sites)
        text, module = _differentiate_pass(module, registry, ready), None
        if ready is None:
            return text
        text = _no_spare_tapes(_plain_shadow_allocations(_free_derived_names(text)))
    return text


def _no_spare_tapes(text: str) -> str:
    """The per-thread spare tape block is a pointer in a global the outer pass gives no
    shadow: its tangent tapes would share the primal's block. Code an outer pass
    differentiates allocates and frees its tapes plainly (only a little slower)."""
    # the engine treats its own push/pop as inactive; in code an outer pass differentiates
    # they move values that carry tangents, so they become ordinary functions there
    text = re.sub(r'@__enzyme_build_tape_(push|pop)(?=\()', r'@__enzyme_build_tape_\1.nested', text)
    text = text.replace("%fits = icmp uge i64 %spcap, %need", "%fits = icmp ult i64 %spcap, 0")
    text = text.replace("%bigger = icmp ugt i64 %cap, %spcap", "%bigger = icmp ult i64 %cap, 0")
    # a frame grows the tape inside a call the outer pass sees as integer-only: reserve the
    # room first, through the call it differentiates, so the tangent tapes grow with it
    if re.search(r'^define [^@\n]*@__enzyme_build_tape_reserve\(', text, re.M):
        text = re.sub(r'^(\s*)(%[-a-zA-Z$._0-9]+ = call i64 @__enzyme_build_tape_frame\(ptr (%[-a-zA-Z$._0-9]+), '
                      r'i64 ([^)]+)\))',
                      r'\1call void @__enzyme_build_tape_reserve(ptr \3, i64 \4)\n\1\2', text, flags=re.M)
    return text


def _plain_shadow_allocations(text: str) -> str:
    """A reverse pass's shadow blocks (`__enzyme_build_shadow_alloc`) are calloc'd blocks to
    the next pass: adjoints accumulated there carry tangents when forward mode runs over a
    gradient, so the allocation must be one the engine knows (it gets a shadow of its own)."""
    if "@__enzyme_build_shadow_alloc(i64 " not in text:
        return text
    text = re.sub(r'call ptr @__enzyme_build_shadow_alloc\(i64 ', 'call ptr @calloc(i64 1, i64 ', text)
    if not re.search(r'^(?:declare|define)[^@\n]*@calloc\(', text, re.M):
        text += "declare ptr @calloc(i64, i64)\n"
    return text


_LOCAL_WITH_DOLLAR = re.compile(r'(?<![-a-zA-Z$._0-9"])(%|^)([-a-zA-Z._0-9]*\$[-a-zA-Z$._0-9]*)(?=[:\s,)\]}]|$)', re.M)


def _free_derived_names(text: str) -> str:
    """Double the `$` in local names an AD pass made (`%x$t` -> `%x$$t`), so the next pass,
    which names tangents and shadows `<name>$t` / `<name>$sh`, cannot collide with them."""
    # only code lines: constants (`c"%1$s"` formats) and metadata stay as they are
    return "\n".join(line if line.startswith(("@", "!", "attributes ", "declare ", ";"))
                     else _LOCAL_WITH_DOLLAR.sub(lambda m: m.group(1) + m.group(2).replace("$", "$$"), line)
                     for line in text.split("\n"))


_TLS_ADDRESS = re.compile(r'^\s*(%[-a-zA-Z$._0-9]+) = (?:tail |notail |musttail )?call (?:align \d+ |[a-z]+(?:\(\d+\))? )*'
                          r'ptr @llvm\.threadlocal\.address\.p0\(ptr (?:align \d+ |[a-z]+(?:\(\d+\))? )*'
                          r'(@[-a-zA-Z$._0-9]+)\)')
_LOCAL_NAME = re.compile(r'%[-a-zA-Z$._0-9]+(?![-a-zA-Z$._0-9])')


def lower_threadlocal_addresses(text: str) -> str:
    """`%p = call ptr @llvm.threadlocal.address.p0(ptr @g)` -> uses of @g itself (the calling
    thread's instance, as the IR meant before the intrinsic): thread-local accumulators are
    then globals like any other, and their shadows are thread-local too (see shadow_linkage)."""
    if "@llvm.threadlocal.address" not in text:
        return text
    out: list[str] = []
    body: list[str] = []
    mapping: dict[str, str] = {}

    def flush() -> None:
        if mapping:
            out.extend(_LOCAL_NAME.sub(lambda m: mapping.get(m.group(0), m.group(0)), line) for line in body)
        else:
            out.extend(body)
        body.clear()
        mapping.clear()

    for line in text.split("\n"):
        if line.startswith("define "):
            flush()
        m = _TLS_ADDRESS.match(line)
        if m:
            mapping[m.group(1)] = m.group(2)
            continue
        body.append(line)
        if line.startswith("}"):
            flush()
    flush()
    return "\n".join(out)


_DBG_ATTACHMENT = re.compile(r',? !dbg !\d+')


def specialize_callback_arguments(text: str, keep: set[str] = frozenset()) -> str:
    """`__enzyme_*(simpson, enzyme_const, integrand, …)` where simpson calls its parameter:
    differentiate a copy of simpson with that parameter replaced by the function passed,
    so the calls through it are direct (quadrature, root finders and ODE solvers taking
    their integrand as a callback). The copy keeps the signature; the parameter is unused.
    Functions in `keep` (with custom rules, or inactive) are left as they are."""
    return _specialize_callback_arguments(text, keep)[0]


def _specialize_callback_arguments(text: str, keep: set[str]):
    """specialize_callback_arguments, plus the parsed module when the text is unchanged
    (None when there was nothing to parse or the text changed)."""
    if "__enzyme_" not in text:
        return text, None
    module = parse_module(text)
    extra: list[str] = []
    lines = list(module.lines)
    clones: dict[tuple, str] = {}
    for name in module.functions:
        if not any("__enzyme_" in line for line in module.functions.body_lines(name)[1:]):
            continue
        for inst in module.functions[name].instructions():
            if inst.opcode != "call" or not marker_kind(inst.callee) or not inst.operands:
                continue
            m = re.search(r'@("[^"]*"|[-a-zA-Z$._0-9]+)', inst.operands[0][1])
            primal = module.functions.get(strip_name("@" + m.group(1))) if m else None
            if primal is None or not re.fullmatch(r'[-a-zA-Z$._0-9]+', primal.name) or primal.name in keep:
                continue
            called = [p.name for p in primal.params
                      if any(i.opcode == "call" and i.callee is None and re.search(
                          re.escape(p.name) + r'\(', i.text.split("=", 1)[-1]) for i in primal.instructions())]
            passed = [v for t, v in inst.operands[1:] if t == "ptr" and v.startswith("@")
                      and strip_name(v) in module.functions]
            if not called or len(passed) != len(called):
                continue
            key = (primal.name, tuple(passed))
            if key not in clones:
                clone = make_name("@", primal.name, "cb" + str(len(clones)))
                clones[key] = clone
                mapping = dict(zip(called, passed))
                body = module.functions.body_lines(primal.name)
                head = re.sub(r'^define\s+(?:(?:private|internal|external|linkonce_odr|linkonce|weak_odr|weak|'
                              r'available_externally|dso_local|hidden|protected|default)\s+)*', "define internal ",
                              body[0])
                # the copy has no debug info of its own (a subprogram belongs to one function)
                extra.append(_DBG_ATTACHMENT.sub("", head.replace("@" + primal.name + "(", clone + "(", 1)))
                extra += [_DBG_ATTACHMENT.sub("", _LOCAL_NAME.sub(lambda x: mapping.get(x.group(0), x.group(0)), ln))
                          for ln in body[1:] if not ln.lstrip().startswith("#dbg_")]
            target = inst.operands[0][1]
            line = lines[inst.first_line]
            lines[inst.first_line] = line.replace(target, target.replace("@" + m.group(1), clones[key]), 1)
    if not clones:
        return text, module
    return "\n".join(lines + extra) + "\n", None


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
            todo += [strip_name(i.callee) for i in module.functions[n].instructions()
                     if i.opcode == "call" and i.callee and i.callee.startswith("@")]
            todo += re.findall(r'@("[^"]*"|[-a-zA-Z$._0-9]+)', " ".join(
                v for i in module.functions[n].instructions() if i.opcode != "call" for _, v in i.operands))
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


def _differentiate_pass(module, registry: Registry | None, ready) -> str:
    """One rewrite of the AD call sites (all of them, or those in `ready`)."""
    engine = Engine(module, registry or Registry())
    replace: dict[int, list[str]] = {}
    insert_after: dict[int, list[str]] = {}
    # names from an earlier pass stay taken
    counter = [max((int(n) for n in re.findall(r'%enzyme\$call(\d+)', "\n".join(module.lines))), default=0)]

    def fresh() -> str:
        counter[0] += 1
        return f"%enzyme$call{counter[0]}"

    for name in module.functions:
        if not any("__enzyme_" in line for line in module.functions.body_lines(name)[1:]):
            continue
        fn = module.functions[name]
        entry_allocas: list[str] = []
        for inst in fn.instructions():
            if inst.opcode == "call" and marker_kind(inst.callee) and (ready is None or (name, inst.first_line) in ready):
                new_lines = rewrite_call(engine, fn, inst, fresh, entry_allocas)
                dbg = inst.metadata.get("!dbg")
                if dbg:  # keep the call site's location (the verifier wants it on inlinable calls)
                    new_lines = [ln + f", !dbg {dbg}" if re.match(r'\s*(%\S+\s*=\s*)?call\b', ln) else ln
                                 for ln in new_lines]
                normal = getattr(inst, "invoke_normal", None)
                if normal is not None:   # an invoke: continue to its normal destination
                    new_lines.append(f"  br label {make_name('%', normal)}")
                    for extra in range(inst.first_line + 1, inst.line + 1):
                        replace[extra] = []
                replace[inst.first_line] = new_lines
        if entry_allocas:
            label_line = next(i for i in range(fn.first_line + 1, fn.last_line)
                              if module.lines[i] and not module.lines[i].startswith(" ")
                              and not module.lines[i].startswith(";"))
            insert_after[label_line] = entry_allocas
    check_split_pairs(engine.split_calls)
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
    defined = set(module.functions) | set(module.globals)
    for g in sorted(engine.shadow_globals_used):
        if strip_name(make_name('@', g, 'sh')) not in defined:   # an earlier (inner) pass made it
            out.append(f"{make_name('@', g, 'sh')} = {shadow_linkage(module, g)} global {engine.active_globals[g]} "
                       f"zeroinitializer, align 16")
    out.extend(t for t in engine.texts if defined_symbol(t) not in defined)
    out.extend(t for t in support_texts if defined_symbol(t) not in defined)
    return "\n".join(out) + "\n"


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


def _define_marker_global(line: str) -> str:
    """`@enzyme_dup = external global i32` -> a weak definition, so the final link never fails."""
    m = re.match(r'^(@enzyme_[A-Za-z0-9_]+) = external (?:[a-z_]+ )*global i32(.*)$', line)
    if m:
        return f"{m.group(1)} = weak global i32 0{m.group(2)}"
    return line
