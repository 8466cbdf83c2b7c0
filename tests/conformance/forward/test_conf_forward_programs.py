"""Forward and vector-mode conformance programs built with `enzyme-build cc/c++` at several -O levels."""
from __future__ import annotations

import pytest

# (program, number of checks it prints)
PROGRAMS = [
    ("fwd_science.c", 20),
    ("fwd_vector.c", 46),
    ("fwd_cxx.cc", 8),
    ("fwd_custom.c", 21),
    ("fwd_stdvec.cc", 4),
    ("fwd_mathmem.c", 34),
    ("fwd_abi.c", 12),
    ("fwd_cxxrules.cc", 4),
]


@pytest.mark.parametrize("source,checks", PROGRAMS)
def test_program_o2(conf_build, conf_run_ok, source, checks):
    assert conf_run_ok(conf_build(source)) == checks


@pytest.mark.parametrize("opt", ["-O0", "-O1", "-O3", "-O2 -g"])
def test_science_other_levels(conf_build, conf_run_ok, opt):
    assert conf_run_ok(conf_build("fwd_science.c", opt)) == 20


@pytest.mark.parametrize("opt", ["-O0", "-O3"])
def test_custom_rules_other_levels(conf_build, conf_run_ok, opt):
    assert conf_run_ok(conf_build("fwd_custom.c", opt)) == 21


def test_vector_ad_before_opt(conf_build, conf_run_ok):
    assert conf_run_ok(conf_build("fwd_vector.c", env_extra={"ENZYME_BUILD_AD_BEFORE_OPT": "1"})) == 46


def test_vector_o0(conf_build, conf_run_ok):
    assert conf_run_ok(conf_build("fwd_vector.c", "-O0")) == 46


@pytest.mark.xfail(strict=True, reason="see failure fwd-01")
def test_stdvec_o0(conf_build, conf_run_ok):
    assert conf_run_ok(conf_build("fwd_stdvec.cc", "-O0")) == 4


@pytest.mark.xfail(strict=True, reason="see failure fwd-02")
def test_cxx_o0(conf_build, conf_run_ok):
    assert conf_run_ok(conf_build("fwd_cxx.cc", "-O0")) == 8


def test_cxx_o1(conf_build, conf_run_ok):
    assert conf_run_ok(conf_build("fwd_cxx.cc", "-O1")) == 8


@pytest.mark.parametrize("opt", ["-O0", "-O3 -ffast-math"])
def test_mathmem_other_levels(conf_build, conf_run_ok, opt):
    assert conf_run_ok(conf_build("fwd_mathmem.c", opt)) == 34


def test_science_and_custom_ad_before_opt(conf_build, conf_run_ok):
    env = {"ENZYME_BUILD_AD_BEFORE_OPT": "1"}
    assert conf_run_ok(conf_build("fwd_science.c", env_extra=env)) == 20
    assert conf_run_ok(conf_build("fwd_custom.c", env_extra=env)) == 21


def test_abi_o0(conf_build, conf_run_ok):
    assert conf_run_ok(conf_build("fwd_abi.c", "-O0")) == 12


@pytest.mark.xfail(strict=True, reason="see failure fwd-05")
def test_struct_by_value_in_registers(conf_build, conf_run_ok):
    assert conf_run_ok(conf_build("fwd_structreg.c")) == 4


@pytest.mark.xfail(strict=True, reason="see failure fwd-06")
def test_cxx_rules_in_namespace(conf_build, conf_run_ok):
    assert conf_run_ok(conf_build("fwd_cxxns.cc")) == 1
