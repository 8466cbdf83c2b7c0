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
    """User-supplied derivatives of one function (names of functions in the module)."""

    function: str
    augment: str | None = None   # f's args interleaved with shadows -> tape (or {tape, primal})
    gradient: str | None = None  # same args, then return adjoint (if active float), then tape
    forward: str | None = None   # interleaved (x, dx) args -> {primal, tangent}


@dataclass
class Registry:
    rules: dict[str, CustomRule] = field(default_factory=dict)
    inactive: set[str] = field(default_factory=set)            # functions AD treats as inactive
    function_like: dict[str, str] = field(default_factory=dict)  # f -> libm name whose rule f uses
    # names of the registration globals themselves, removed from the module after AD
    registration_globals: set[str] = field(default_factory=set)
