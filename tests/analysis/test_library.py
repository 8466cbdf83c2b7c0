"""The one table of library facts (enzyme_build/analysis/library.py) and its views."""
from __future__ import annotations

from enzyme_build.ad.rules import MATH_RULES, math_callee, math_rule
from enzyme_build.analysis import library
from enzyme_build.analysis.activity import ALLOCATORS, DEALLOCATORS, INACTIVE_FUNCTIONS


def test_views_come_from_the_table():
    assert ALLOCATORS is library.ALLOCATORS and DEALLOCATORS is library.DEALLOCATORS
    assert INACTIVE_FUNCTIONS is library.INACTIVE_FUNCTIONS
    assert {"@malloc", "@calloc", "@realloc", "@_ZnwmSt11align_val_t"} <= ALLOCATORS
    assert {"@free", "@_ZdlPvSt11align_val_t"} <= DEALLOCATORS
    assert "fread" in library.WRITES_THROUGH_ARGS and "fread" in library.FILLS_BUFFERS
    assert "printf" in INACTIVE_FUNCTIONS and "printf" not in library.WRITES_THROUGH_ARGS


def test_allocation_sizes():
    assert library.allocation_size_args("@malloc") == (0,)
    assert library.allocation_size_args("calloc") == (0, 1)
    assert library.allocation_size_args("@aligned_alloc") == (1,)          # (alignment, size)
    assert library.allocation_size_args("@_ZnwmSt11align_val_t") == (0,)   # (size, alignment)
    assert library.allocation_size_args("@printf") is None
    assert library.allocation_size_args("@mystery") is None


def test_every_rule_has_its_math_facts():
    for name, rule in MATH_RULES.items():
        facts = library.MATH[name]
        assert facts.arity == len(rule.partials) or name in ("powi", "ldexp", "scalbn", "frexp", "modf"), name
        # libm spellings resolve exactly when libm has the function
        assert (math_rule("@" + name) is not None) == facts.libm, name


def test_declared_math_callees_follow_the_table():
    assert math_callee("pow", "double") == ("@llvm.pow.f64", "declare double @llvm.pow.f64(double, double)")
    assert math_callee("atan2", "float") == ("@atan2f", "declare float @atan2f(float, float)")
    assert math_callee("fmax", "double") == ("@fmax", "declare double @fmax(double, double)")
    assert math_callee("fma", "double")[1] == "declare double @llvm.fma.f64(double, double, double)"
    assert library.REUSABLE_MATH == {"sin", "cos", "sinh", "cosh", "exp", "log", "sqrt"}
