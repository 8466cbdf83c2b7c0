"""The AD engine's state for one module: the IR, the registrations (custom rules, inactive
and function_like functions), what is inactive or reaches active globals, the memo of derived
functions (keyed by their Signature, which holds the function, the activity of each
parameter, the mode and the width; reverse-mode keys add whether the split pieces are
meant), the derived function texts, declarations and support code they need.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .. import progress
from ..analysis.activity import callee_name, global_names_pattern, written_float_globals
from ..analysis.effects import derivative_free
from ..custom import convention
from ..custom.registry import Registry
from ..ir.model import Function, Instruction, function_attributes, is_local, make_name
from .abi import Signature
from .cache import _written_parameters, derived_pointers, float_data_misuses, passes_reverse_only_shadow
from .diagnostics import missing_derivative
from .reverse import ReverseGenerator
from .rules import math_rule
from .tape import DECLARATIONS


@dataclass(frozen=True)
class DerivedKey:
    """What a derived function is memoized by: its Signature (function, activity per
    parameter, mode, width, and the call's promises) and, in reverse mode, whether the split
    pieces (augmented + reverse) or the combined function is meant."""
    sig: Signature
    split: bool = False


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
        self._pattern = global_names_pattern(active_globals) if active_globals else None
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


class _GlobalsNamed:
    """The mutable globals a function's body, or the body of a function it calls, names (as
    `@g` operands): what a caller may vouch for when the function's split pieces re-read
    globals (`Signature.stable_globals`)."""

    _NAME = re.compile(r'@("[^"]+"|[-a-zA-Z$._0-9]+)')

    def __init__(self, module):
        self.module = module
        self._memo: dict[str, frozenset] = {}

    def __call__(self, name: str) -> frozenset:
        if name in self._memo:
            return self._memo[name]
        if name not in self.module.functions:
            return frozenset()
        self._memo[name] = frozenset()   # recursion: decided by the other paths
        found: set[str] = set()
        callees: set[str] = set()
        for line in self.module.functions.body_lines(name)[1:]:
            if "@" not in line:
                continue
            for word in self._NAME.findall(line):
                word = word.strip('"')
                if word in self.module.globals:
                    found.add(make_name("@", word))
                elif word in self.module.functions and word != name:
                    callees.add(word)
        for callee in callees:
            found |= self(callee)
        self._memo[name] = frozenset(found)
        return self._memo[name]


def user_shadow_globals(module, registry: Registry) -> dict[str, tuple[str, str]]:
    """@g -> (@d_g, g's value type) for each `enzyme_shadow` registration whose global holds
    floats or a pointer: the engine uses @d_g wherever it would make its own shadow global, so
    the user seeds tangents in it (forward mode) and reads adjoints from it (reverse mode), or,
    for a pointer global, points it at the shadow of what g points to."""
    from ..ir.model import is_active_type, take_type
    found = {}
    for g, shadow in registry.shadow_globals.items():
        line = module.globals.get(g)
        m = re.match(r'^@(?:"[^"]*"|\S+)\s*=\s*(.*?)\bglobal\s+(.*)$', line or "")
        if m is None or shadow not in module.globals:
            continue
        ty, _ = take_type(m.group(2))
        if is_active_type(ty) or ty.startswith(("[", "{", "<{", "%")) or ty == "ptr":
            # a pointer global's shadow holds the shadow pointer (a workspace `double *g_work`
            # whose shadow buffer the user allocates: pointers loaded from g get d_g's value)
            found[make_name("@", g)] = (make_name("@", shadow), ty)
    return found


def user_shadow_lanes(module) -> dict[tuple[str, int], str]:
    """(@g, L) -> @g$user<L> for each lane L > 0 of g's tangent the program queried with
    `__enzyme_shadow(&g, W, L)` (driver.lower_shadow_queries)."""
    found = {}
    for name in module.globals:
        m = re.fullmatch(r'(.+)\$user([1-9]\d*)', name)
        if m and m.group(1) in module.globals:
            found[(make_name("@", m.group(1)), int(m.group(2)))] = make_name("@", name)
    return found


# ---------------------------------------------------------------- custom-rule adapters
# The sweeps call every custom rule in one shape (augment -> tape or {tape, primal}; gradient
# taking the tape last; forward -> {primal, tangent}). Enzyme's other shapes (an augment
# returning the primal alone or nothing, with a gradient taking no tape; a forward rule
# returning the tangent alone) get a small internal adapter of that shape around the user's
# rule. An adapter is named after the rule plus one of these suffixes, so
# custom.registry.check_rule_arity still checks the user's own function at each call site.
TAPELESS_AUGMENT_SUFFIX = convention.TAPELESS_AUGMENT_SUFFIX
TAPELESS_GRADIENT_SUFFIX = convention.TAPELESS_GRADIENT_SUFFIX
TANGENT_ONLY_SUFFIX = convention.TANGENT_ONLY_SUFFIX


def _signature(module, name: str) -> tuple[str, list[str]] | None:
    """(return type, parameter types) of a function defined or declared in the module."""
    fn = module.functions.get(name)
    if fn is not None:
        if any(p.type == "..." or "byval" in p.attrs or "sret" in p.attrs for p in fn.params):
            return None
        return fn.return_type, [p.type for p in fn.params]
    from ..custom.collect import parse_functions
    found = parse_functions(module.declarations.get(name, "")).get(name)
    if found is None or found.abi_rewritten:
        return None
    return found.result, list(found.params)


def _ir_class(ty: str) -> str:
    from ..custom.collect import classify_ir_type
    found = classify_ir_type(ty)
    return "struct" if found == "aggregate" else found


def _primal_arguments(f_params: list[str], rule_params: list[str], *, forward: bool) -> list[int] | None:
    """Positions of f's own arguments among a rule's interleaved parameters (each pointer, and
    in forward rules each float, followed by its shadow or tangent); None if they don't fit."""
    positions, k = [], 0
    shadowed = len(rule_params) != len(f_params)
    for ty in f_params:
        positions.append(k)
        k += 1
        if shadowed and (_ir_class(ty) == "pointer" or (forward and _ir_class(ty) == "float")):
            k += 1
    return positions if k == len(rule_params) else None


def _adapter(name: str, ret: str, params: list[str], body: list[str]) -> str:
    args = ", ".join(f"{t} %a{k}" for k, t in enumerate(params))
    return "\n".join([f"define internal {ret} {make_name('@', name)}({args}) alwaysinline {{", "entry:",
                      *body, "}"])


def adapter_return_types(texts: list[str]) -> dict[str, str]:
    """Adapter name -> its return type (the sweeps ask the engine for rules' return types)."""
    found = {}
    for text in texts:
        m = re.match(r'define internal (.*?) @("[^"]*"|[-a-zA-Z$._0-9]+)\(', text)
        if m:
            found[m.group(2).strip('"')] = m.group(1)
    return found


def adapt_custom_rules(module, rules: dict) -> tuple[dict, list[str]]:
    """The rules as the sweeps call them, and the adapters' texts (see above)."""
    from dataclasses import replace
    adapted, texts = {}, []
    for f, rule in rules.items():
        primal = _signature(module, f)
        if primal is None:
            adapted[f] = rule
            continue
        f_ret, f_params = primal
        call_f = lambda positions, params: f"call {f_ret} {make_name('@', f)}(" + ", ".join(   # noqa: E731
            f"{params[k]} %a{k}" for k in positions) + ")"
        new = rule
        aug = _signature(module, rule.augment) if rule.augment and rule.gradient else None
        grad = _signature(module, rule.gradient) if aug else None
        shape = convention.augment_result(_ir_class(f_ret), _ir_class(aug[0])) if aug else None
        if aug and shape == convention.AUGMENT_TAPE and f_ret not in ("void", "ptr"):
            # the tape alone: the primal comes from calling f
            positions = _primal_arguments(f_params, aug[1], forward=False)
            if positions is not None:
                pass_args = ", ".join(f"{t} %a{k}" for k, t in enumerate(aug[1]))
                pair = f"{{ ptr, {f_ret} }}"
                aug_name = rule.augment + TAPELESS_AUGMENT_SUFFIX
                texts.append(_adapter(aug_name, pair, aug[1], [
                    f"  %t = call ptr {make_name('@', rule.augment)}({pass_args})",
                    f"  %v = {call_f(positions, aug[1])}",
                    f"  %p0 = insertvalue {pair} poison, ptr %t, 0",
                    f"  %p = insertvalue {pair} %p0, {f_ret} %v, 1",
                    f"  ret {pair} %p"]))
                new = replace(new, augment=aug_name)
        if aug and grad and shape in (convention.AUGMENT_PRIMAL, convention.AUGMENT_NOTHING):
            aug_ret, aug_params = aug
            pass_args = ", ".join(f"{t} %a{k}" for k, t in enumerate(aug_params))
            body = []
            if f_ret == "void":
                body += [f"  call void {make_name('@', rule.augment)}({pass_args})", "  ret ptr null"]
            else:
                pair = f"{{ ptr, {f_ret} }}"
                if shape == convention.AUGMENT_PRIMAL:
                    body.append(f"  %v = call {aug_ret} {make_name('@', rule.augment)}({pass_args})")
                else:
                    positions = _primal_arguments(f_params, aug_params, forward=False)
                    if positions is None:
                        adapted[f] = rule
                        continue
                    body += [f"  call void {make_name('@', rule.augment)}({pass_args})",
                             f"  %v = {call_f(positions, aug_params)}"]
                body += [f"  %p = insertvalue {pair} {{ ptr null, {f_ret} poison }}, {f_ret} %v, 1",
                         f"  ret {pair} %p"]
            aug_name = rule.augment + TAPELESS_AUGMENT_SUFFIX
            texts.append(_adapter(aug_name, "ptr" if f_ret == "void" else f"{{ ptr, {f_ret} }}",
                                  aug_params, body))
            grad_ret, grad_params = grad
            pass_grad = ", ".join(f"{t} %a{k}" for k, t in enumerate(grad_params))
            grad_name = rule.gradient + TAPELESS_GRADIENT_SUFFIX
            call = f"call {grad_ret} {make_name('@', rule.gradient)}({pass_grad})"
            texts.append(_adapter(grad_name, grad_ret, grad_params + ["ptr"],
                                  [f"  {call}", "  ret void"] if grad_ret == "void" else
                                  [f"  %r = {call}", f"  ret {grad_ret} %r"]))
            new = replace(new, augment=aug_name, gradient=grad_name)
        fwd = _signature(module, rule.forward) if rule.forward else None
        if fwd and f_ret != "void" and fwd[0] == f_ret:
            positions = _primal_arguments(f_params, fwd[1], forward=True)
            if positions is not None:
                pass_args = ", ".join(f"{t} %a{k}" for k, t in enumerate(fwd[1]))
                pair = f"{{ {f_ret}, {f_ret} }}"
                name = rule.forward + TANGENT_ONLY_SUFFIX
                texts.append(_adapter(name, pair, fwd[1], [
                    f"  %t = call {f_ret} {make_name('@', rule.forward)}({pass_args})",
                    f"  %v = {call_f(positions, fwd[1])}",
                    f"  %p0 = insertvalue {pair} poison, {f_ret} %v, 0",
                    f"  %p1 = insertvalue {pair} %p0, {f_ret} %t, 1",
                    f"  ret {pair} %p1"]))
                new = replace(new, forward=name)
        adapted[f] = new
    return adapted, texts


class Engine:
    """Per-module state: the IR, registrations, memo of derived functions, emitted text."""

    def __init__(self, module, registry: Registry):
        self.module = module
        self.registry = registry
        self.custom, adapters = adapt_custom_rules(module, registry.rules)
        self.shadow_outputs = {f: r.null_shadows for f, r in self.custom.items() if r.null_shadows}
        # rules whose augment/gradient take the overwritten/shadowed masks (convention.py); the
        # letters also say which pointers the function writes ('w') and only reads ('r')
        self.cache_masks = {f: r.cache_mask for f, r in self.custom.items() if r.cache_mask}
        self.inactive = _Inactive(set(registry.inactive), module)
        self.function_like = dict(registry.function_like)
        self.differentiable = {n for n in module.functions if n not in self.custom and n not in self.inactive}
        self.derived: dict[DerivedKey, dict[str, str]] = {}   # derived function names by key
        self.memo: dict[tuple, object] = {}   # answers of the engine's other questions (cached)
        self.used_names: set[str] = set(module.functions) | set(module.declarations) | set(module.globals)
        self.texts: list[str] = list(adapters)
        self.adapter_types = adapter_return_types(adapters)
        self.declarations: dict[str, str] = {}
        self.support: set[str] = set()
        self.chain: list[tuple[str, str | None]] = []   # (function, call location) being derived
        self.active_globals = written_float_globals(module)   # global -> value type
        # user-declared facts about globals: never active, or shadowed by the user's own global
        for g in registry.inactive_globals:
            self.active_globals.pop(make_name("@", g), None)
        self.user_shadows = user_shadow_globals(module, registry)   # @g -> @d_g
        for g, (_, ty) in self.user_shadows.items():
            self.active_globals.setdefault(g, ty)
        self.user_shadows = {g: d for g, (d, _) in self.user_shadows.items()}
        self.user_lanes = user_shadow_lanes(module)   # (@g, lane L > 0) -> @g$user<L>
        for g, ty in registry.context_globals.items():
            self.active_globals.setdefault(g, ty)
        # lowering a call made with a differentiation context (ad/contexts.py): the global
        # shadows it leaves are the context's, the user's to read, not cleared after the call
        self.context_call = False
        self.context_width: int | None = None   # the width of that context, while one is lowered
        self.global_users = _GlobalUsers(module, self.active_globals)
        self.globals_named = _GlobalsNamed(module)
        self.write_summaries: dict[str, frozenset | None] = {}   # cache.call_write_targets
        self.shadow_globals_used: set[str] = set()
        self._returns_shadow: dict[tuple, bool] = {}
        self._writes_active: dict[tuple, bool] = {}   # writes_active_through
        self._carriers: dict[str, tuple[Function, set[str]]] = {}   # pointer_words
        self.split_calls: list[tuple[str, Signature, str]] = []   # (kind, signature, call site)
        # record type -> the helper that moves the adjoints of a memcpy of such records
        self.record_adjoint_helpers: dict[tuple[str, str], str] = {}
        # attribute groups of derived functions: body -> '#N' (new groups, after the module's)
        self.derived_groups: dict[str, str] = {}

    # ---------------------------------------------------------------- attributes
    # what a derived function inherits from its primal: the code it may use (target CPU and
    # features: a -march=native program's derivatives use AVX too, and the primal's helpers,
    # compiled with those features, can be inlined into them) and the floating-point model
    DERIVED_ATTRIBUTE_KEYS = ("target-cpu", "target-features", "tune-cpu", "no-trapping-math",
                              "unsafe-fp-math", "no-infs-fp-math", "no-nans-fp-math",
                              "no-signed-zeros-fp-math", "approx-func-fp-math", "denormal-fp-math",
                              "denormal-fp-math-f32")

    def derived_attributes(self, fn: Function) -> str:
        """` #N`, the attribute group a derived function of `fn` gets (see
        DERIVED_ATTRIBUTE_KEYS), or "" when the primal has none of those attributes."""
        attrs = function_attributes(self.module, fn)
        found = [m.group(0) for m in re.finditer(r'"([-\w]+)"="[^"]*"', attrs)
                 if m.group(1) in self.DERIVED_ATTRIBUTE_KEYS]
        if self._user_noinline(fn):
            found.insert(0, "noinline")
        if not found:
            return ""
        body = "{ " + " ".join(dict.fromkeys(found)) + " }"
        if body not in self.derived_groups:
            first = 1 + max((int(k[1:]) for k in self.module.attribute_groups()), default=-1)
            self.derived_groups[body] = f"#{first + len(self.derived_groups)}"
        return " " + self.derived_groups[body]

    def attribute_group_lines(self) -> list[str]:
        return [f"attributes {group} = {body}" for body, group in self.derived_groups.items()]

    # ---------------------------------------------------------------- inlining
    INLINE_PIECES_MAX = 200      # instructions of the primal
    INLINE_PIECES_BUDGET = 4000  # primal instructions of all force-inlined functions together

    def writes_through(self, name: str, k: int) -> bool:
        """Whether the module's function `name` (or what it calls) may write through its
        k-th parameter; true when that is not known (`cache._written_parameters`)."""
        if name not in self.module.functions:
            return True
        written = _written_parameters(self, name)
        return written is None or k in written

    def inline_pieces(self, fn: Function) -> bool:
        """Whether the split pieces of `fn` are marked alwaysinline: small, non-recursive
        functions the user did not mark `noinline`, while the module's budget lasts. The two
        pieces talk through memory (tape records, shadow pointers, adjoint slots); inlined
        into their callers, O3 keeps that traffic in registers. Left to the inliner, a piece
        with two callers (a combined and a split gradient of the same function) stays a call
        and the gradient gets a third slower. Without the budget a program of hundreds of
        small functions is folded into one giant gradient (optimization and code generation
        time double)."""
        key = ("inline-pieces", fn.name)
        if key not in self.memo:
            size = sum(1 for _ in fn.instructions())
            used = self.memo.get(("inline-pieces", None), 0)
            inline = size <= self.INLINE_PIECES_MAX and used + size <= self.INLINE_PIECES_BUDGET \
                and not self._user_noinline(fn) \
                and not self._reaches(fn.name, fn.name)
            if inline:
                self.memo[("inline-pieces", None)] = used + size
            self.memo[key] = inline
        return self.memo[key]

    def _user_noinline(self, fn: Function) -> bool:
        """Whether the definition of `fn` carries `noinline` (inline or in its groups)."""
        attrs = function_attributes(self.module, fn)[len(fn.header):] + fn.header.rsplit(")", 1)[-1]
        return "noinline" in attrs.split()

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
        return self.derived[DerivedKey(sig, split)]

    def request_combined(self, fn: Function, sig: Signature) -> str:
        key = DerivedKey(sig)
        if key not in self.derived:
            self.derived[key] = {"combined": self._unique(f"diffe_{fn.name}", sig)}
            self._generate(fn, sig, split=False)
        return self.derived[key]["combined"]

    def request_split(self, fn: Function, sig: Signature, caller: str | None = None) -> tuple[str, str]:
        key = DerivedKey(sig, split=True)
        if key not in self.derived:
            self.derived[key] = {"augmented": self._unique(f"augmented_{fn.name}", sig),
                                 "reverse": self._unique(f"reverse_{fn.name}", sig)}
            self._generate(fn, sig, split=True)
        names = self.derived[key]
        return names["augmented"], names["reverse"]

    def request_forward(self, fn: Function, sig: Signature, generate) -> str:
        """The name of fwddiffe_<f> for this forward-mode signature; `generate(name)` returns
        its text, called once (after the name is memoized, so recursion and shared call sites
        work)."""
        key = DerivedKey(sig)
        if key not in self.derived:
            self.derived[key] = {"forward": self._unique(f"fwddiffe_{fn.name}", sig)}
            progress.report(f"tangent of {fn.name}")
            self.chain.append((fn.name, None))
            try:
                self.texts.append(generate(self.derived[key]["forward"]))
            finally:
                self.chain.pop()
        return self.derived[key]["forward"]

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
        act = self._callee_activity(fn, args, ret_needs_shadow=needed)
        rets = [b.terminator.operands[0][1] for b in fn.blocks
                if b.terminator.opcode == "ret" and b.terminator.operands]
        answer = any(act.has_shadow(v) for v in rets)
        self._returns_shadow[key] = answer
        return answer

    def _callee_activity(self, fn: Function, args: tuple[str, ...], ret_needs_shadow: bool = False):
        """The activity of `fn` called with `args` ('out', 'dup', 'const' per parameter), as
        the engine's questions about a callee ask it (`returns_shadow`, `writes_active_through`)."""
        from ..analysis.activity import analyze_activity
        from ..analysis.types import float_views
        return analyze_activity(fn, list(args), defined=self.differentiable, inactive=self.inactive,
                                custom=self.custom, active_globals=set(self.active_globals),
                                views=float_views(fn, self.module), returns_shadow=self.returns_shadow,
                                ret_needs_shadow=ret_needs_shadow, global_users=self.global_users,
                                shadow_outputs=self.shadow_outputs, slot_writes=self.writes_through,
                                pointer_words=self.pointer_words(fn))

    def writes_active_through(self, name: str, args: tuple[str, ...], k: int) -> bool:
        """Whether `name`, called with this activity ('out', 'dup', 'const' per parameter),
        stores data carrying a derivative through its k-th parameter: itself, by a copy from
        shadowed memory, or through the functions it hands that pointer to. A caller that
        passes a pointer it cannot shadow (one loaded from memory the user declared constant)
        asks this: the callee would take the parameter for constant and drop what it writes,
        and the caller would read the memory back as constant data. Recursive questions in
        flight are answered False."""
        key = (name, args, k)
        if key in self._writes_active:
            return self._writes_active[key]
        fn = self.module.functions.get(name)
        params = [p for p in fn.params if p.type != "..."] if fn is not None else []
        if fn is None or not fn.blocks or k >= len(params) or params[k].type != "ptr":
            return False
        self._writes_active[key] = False
        from ..analysis.activity import call_arg_activity, callee_name, pointer_roots
        act = self._callee_activity(fn, args)
        target = params[k].name
        cache: dict = {}

        def through(v: str) -> bool:
            return is_local(v) and target in pointer_roots(fn, v, cache)

        answer = False
        for inst in fn.instructions():
            if inst.opcode == "store":
                (vty, v), (_, p) = inst.operands
                if (v in act.varied or (vty == "ptr" and act.has_shadow(v))) and through(p):
                    answer = True
            elif inst.opcode == "call":
                callee = callee_name(inst)
                if callee.startswith(("llvm.memcpy", "llvm.memmove")):
                    answer = act.has_shadow(inst.operands[1][1]) and through(inst.operands[0][1])
                elif callee in self.module.functions and callee not in self.custom:
                    ops = inst.operands
                    sub = call_arg_activity(act, ops)
                    answer = any(t == "ptr" and sub[j] == "const" and through(v)
                                 and self.writes_active_through(callee, sub, j) for j, (t, v) in enumerate(ops))
            if answer:
                break
        self._writes_active[key] = answer
        return answer

    def pointer_words(self, fn: Function) -> set[str]:
        """`types.pointer_carriers` of `fn`: integer copies of bytes holding pointers. Once
        per function object, for every activity and derivative asked of it."""
        known = self._carriers.get(fn.name)
        if known is None or known[0] is not fn:
            from ..analysis.types import pointer_carriers
            known = self._carriers[fn.name] = (fn, pointer_carriers(fn, self.module))
        return known[1]

    def _generate(self, fn: Function, sig: Signature, split: bool) -> None:
        progress.report(f"{'split ' if split else ''}gradient of {fn.name}")
        self.chain.append((fn.name, None))
        try:
            generator = ReverseGenerator(self, fn, sig, split)
            self.texts.extend(generator.generate())
            generator.release()
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
        if name in self.adapter_types:
            return self.adapter_types[name]
        fn = self.module.functions.get(name)
        if fn:
            return fn.return_type
        decl = self.module.declarations.get(name, "")
        m = re.match(r'declare\s+(?:\S+\s+)*?(\S+|\{[^}]*\})\s+@', decl)
        return m.group(1) if m else "ptr"

    def missing_derivative(self, inst: Instruction, fn: Function, partial_rule: bool = False,
                           mode: str = "reverse") -> None:
        missing_derivative(self, inst, fn, partial_rule, mode)
