"""Custom derivative rules and other registrations found in a whole-program module.

Sources: Enzyme's registration globals (`__enzyme_register_gradient_*`,
`__enzyme_register_derivative_*`, `__enzyme_inactivefn`, `__enzyme_function_like`) and
the globals the compile step generates for `__attribute__((enzyme("augment", f)))` etc.
The AD engine consumes a `Registry`; it never looks at those globals itself.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class CustomRule:
    """User-supplied derivatives of one function (names of functions in the module).

    Their parameters and results follow Enzyme's convention, stated in
    enzyme_build.custom.convention (collect checks it; the engine adapts the shapes the sweeps
    don't call directly). Reverse mode needs both ``augment`` and ``gradient`` (collect
    enforces it). Integer arguments never get shadows. ``origins`` maps a kind to the
    registration global it came from (for error messages).
    """

    function: str
    augment: str | None = None
    gradient: str | None = None
    forward: str | None = None
    origins: dict[str, str] = field(default_factory=dict)
    # enzyme-build's own registrations (custom/collect.py), for rule libraries like blas/:
    # `forward_batch` takes, after each pointer, the array of its shadows of every lane
    # (or null), then the width -- called once per call in vector mode; `null_shadows`
    # (one letter per parameter of f) says the rules take a null shadow for a pointer that
    # has none, and which pointers f writes derivative-carrying data through ('o')
    forward_batch: str | None = None
    null_shadows: str | None = None
    # `cache_mask` (one letter per parameter of f: 'r' a pointer f only reads, 'w' a pointer
    # f may write, '.' anything else): f touches no memory of the program but through those
    # pointers and keeps none of them; its augment and gradient take two more integers
    # after their interleaved arguments (convention.CACHE_MASK_PARAMS): which pointers'
    # memory may change between the call and its gradient, and which have a shadow here
    cache_mask: str | None = None


@dataclass
class Registry:
    rules: dict[str, CustomRule] = field(default_factory=dict)
    inactive: set[str] = field(default_factory=set)            # functions AD treats as inactive
    function_like: dict[str, str] = field(default_factory=dict)  # f -> libm name whose rule f uses
    inactive_globals: set[str] = field(default_factory=set)    # globals that never carry derivatives
    shadow_globals: dict[str, str] = field(default_factory=dict)  # global g -> the user's global d_g
    # @g -> value type: globals whose shadow a differentiation context is asked for (ad/contexts.py);
    # they carry derivatives even where the program never writes them
    context_globals: dict[str, str] = field(default_factory=dict)
    # Enzyme's __enzyme_allocation_like: allocator -> (size argument, free-argument string, deallocator)
    allocation_like: dict[str, tuple[int, str, str]] = field(default_factory=dict)
    # names of the registration globals themselves, removed from the module after AD
    registration_globals: set[str] = field(default_factory=set)
    # f -> (its parameter count, groups of consecutive parameters that are one C struct
    # passed by value in registers, e.g. ((0, 1),) for `double f(vec2 v)` on x86-64);
    # read from the unoptimized module, where the callee still stores them into one struct
    struct_params: dict[str, tuple[int, tuple[tuple[int, ...], ...]]] = field(default_factory=dict)

    def rule_for(self, function: str) -> CustomRule | None:
        return self.rules.get(function)

    def referenced_functions(self) -> set[str]:
        """Every function a registration names: keep these alive until AD is done (the
        pre-AD optimization would otherwise delete rule functions nothing calls yet)."""
        names = set(self.inactive) | set(self.function_like) | set(self.allocation_like)
        names.update(dealloc for _, _, dealloc in self.allocation_like.values())
        for rule in self.rules.values():
            names.add(rule.function)
            names.update(n for n in (rule.augment, rule.gradient, rule.forward, rule.forward_batch) if n)
        return names


def check_rule_arity(module, rule: str, kind: str, function: str, passed: int,
                     activity: tuple[str, ...], location: str | None = None) -> None:
    """Refuse a call of a rule whose definition takes a different number of parameters
    than this call site's activity gives it: the arguments (and the tape) would land in
    the wrong slots and the program would crash or compute garbage at run time."""
    from ..errors import EnzymeBuildError
    from .convention import describe, user_rule
    rule, extra = user_rule(rule)   # an adapter the engine wrapped around the user's rule
    defined = module.functions.get(rule)
    if defined is None or any(p.type == "..." for p in defined.params):
        return
    takes = len(defined.params)
    if takes + extra == passed:
        return
    passed -= extra
    described = ", ".join(f"parameter {k} {a}" for k, a in enumerate(activity, 1))
    primal = module.functions.get(function)
    types = [p.type for p in primal.params] if primal is not None else []
    consts = [str(k) for k, a in enumerate(activity, 1)
              if a == "const" and k <= len(types) and types[k - 1] == "ptr"]
    hint = ("write the rule for this activity (no shadow after an enzyme_const pointer), or pass "
            f"parameter(s) {', '.join(consts)} with enzyme_dup") if consts else \
        "follow Enzyme's convention: " + describe(kind)
    raise EnzymeBuildError(
        f"the custom {kind} rule @{rule} of @{function} takes {takes} parameter(s), but this call "
        f"passes {passed} ({described})", location=location, hint=hint)
