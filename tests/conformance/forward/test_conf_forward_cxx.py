"""Forward and vector-mode conformance programs in C++ built with `enzyme-build c++`."""
from __future__ import annotations

import pytest

PROGRAMS = [
    ("fwd_cxx.cc", 10),
    ("fwd_stdvec.cc", 4),
    ("fwd_cxxrules.cc", 4),
    ("fwd_stl.cc", 15),
    ("fwd_templates.cc", 5),
]


@pytest.mark.parametrize("source,checks", PROGRAMS)
def test_program_o2(conf_build, conf_run_ok, source, checks):
    assert conf_run_ok(conf_build(source)) == checks


def test_cxx_o1(conf_build, conf_run_ok):
    assert conf_run_ok(conf_build("fwd_cxx.cc", "-O1")) == 10


def test_cxx_rules_o0(conf_build, conf_run_ok):
    assert conf_run_ok(conf_build("fwd_cxxrules.cc", "-O0")) == 4


def test_stdvec_o0(conf_build, conf_run_ok):
    assert conf_run_ok(conf_build("fwd_stdvec.cc", "-O0")) == 4


def test_cxx_o0(conf_build, conf_run_ok):
    assert conf_run_ok(conf_build("fwd_cxx.cc", "-O0")) == 10


def test_cxx_rules_in_namespace(conf_build, conf_run_ok):
    assert conf_run_ok(conf_build("fwd_cxxns.cc")) == 1


def test_cxx_ad_before_opt(conf_build, conf_run_ok):
    assert conf_run_ok(conf_build("fwd_cxx.cc", env_extra={"ENZYME_BUILD_AD_BEFORE_OPT": "1"})) == 10


def test_cxx_rules_ad_before_opt(conf_build, conf_run_ok):
    assert conf_run_ok(conf_build("fwd_cxxrules.cc", env_extra={"ENZYME_BUILD_AD_BEFORE_OPT": "1"})) == 4


def test_sort_o0(conf_build, conf_run_ok):
    assert conf_run_ok(conf_build("fwd_stl.cc", "-O0")) == 15
