"""Forward and vector-mode conformance programs built with `enzyme-build cc/c++` at several -O levels."""
from __future__ import annotations

import pytest

# (program, number of checks it prints)
PROGRAMS = [
    ("fwd_science.c", 20),
    ("fwd_vector.c", 46),
]


@pytest.mark.parametrize("source,checks", PROGRAMS)
def test_program_o2(conf_build, conf_run_ok, source, checks):
    assert conf_run_ok(conf_build(source)) == checks


@pytest.mark.parametrize("opt", ["-O0", "-O1", "-O3", "-O2 -g"])
def test_science_other_levels(conf_build, conf_run_ok, opt):
    assert conf_run_ok(conf_build("fwd_science.c", opt)) == 20


def test_vector_ad_before_opt(conf_build, conf_run_ok):
    assert conf_run_ok(conf_build("fwd_vector.c", env_extra={"ENZYME_BUILD_AD_BEFORE_OPT": "1"})) == 46
