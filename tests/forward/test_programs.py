"""Forward mode on compiled programs, checked against finite differences and closed forms."""
from __future__ import annotations

import pytest


@pytest.mark.parametrize("name,extra", [
    ("math", ()),
    ("math", ("-fno-math-errno",)),     # intrinsics (llvm.sin.f64, frem…) instead of libm calls
    ("control", ()),
    ("memory", ()),
    ("vector", ()),
    ("custom", ()),
])
def test_programs(build, run_ok, name, extra):
    assert run_ok(build(name + ".c", extra=extra)) > 0
