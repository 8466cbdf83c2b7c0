"""Compiled programs checked against finite differences, built through run_ad_stage directly."""
from __future__ import annotations

import os

import pytest

from conftest import EXAMPLES, HERE

PROGRAMS = os.path.join(HERE, "programs")


@pytest.mark.parametrize("name", ["relu3", "norm", "split_mode"])
def test_shared_examples(build, run_ok, name):
    assert run_ok(build(os.path.join(EXAMPLES, name + ".c"))) > 0


@pytest.mark.parametrize("name,extra", [
    ("arith", ()),
    ("math", ()),
    ("math", ("-fno-math-errno",)),     # intrinsics (llvm.sin.f64, frem…) instead of libm calls
    ("control", ()),
    ("memory", ()),
    ("calls", ()),
    ("split", ()),
])
def test_programs(build, run_ok, name, extra):
    assert run_ok(build(os.path.join(PROGRAMS, name + ".c"), extra=extra)) > 0
