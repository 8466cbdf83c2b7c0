"""Forward and vector-mode conformance programs in C built with `enzyme-build cc` at several -O levels."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROGRAMS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs")

# (program, number of checks it prints)
PROGRAMS = [
    ("fwd_science.c", 20),
    ("fwd_vector.c", 46),
    ("fwd_custom.c", 23),
    ("fwd_mathmem.c", 34),
    ("fwd_abi.c", 19),
    ("fwd_linalg.c", 19),
    ("fwd_widths.c", 25),
    ("fwd_control.c", 5),
    ("fwd_protos.c", 4),
    ("fwd_quad.c", 2),
    ("fwd_gsl.c", 2),
]
CHECKS = dict(PROGRAMS)


@pytest.mark.parametrize("source,checks", PROGRAMS)
def test_program_o2(conf_build, conf_run_ok, source, checks):
    assert conf_run_ok(conf_build(source)) == checks


@pytest.mark.parametrize("source,opt", [
    ("fwd_science.c", "-O0"), ("fwd_science.c", "-O1"), ("fwd_science.c", "-O3"), ("fwd_science.c", "-O2 -g"),
    ("fwd_custom.c", "-O0"), ("fwd_custom.c", "-O3"),
    ("fwd_vector.c", "-O0"),
    ("fwd_mathmem.c", "-O0"), ("fwd_mathmem.c", "-O3 -ffast-math"),
    ("fwd_abi.c", "-O0"),
    ("fwd_linalg.c", "-O0"),
    ("fwd_control.c", "-O0"),
    ("fwd_protos.c", "-O0"),
    ("fwd_quad.c", "-O0"),
    ("fwd_gsl.c", "-O0"),
])
def test_program_other_levels(conf_build, conf_run_ok, source, opt):
    assert conf_run_ok(conf_build(source, opt)) == CHECKS[source]


@pytest.mark.parametrize("source", ["fwd_science.c", "fwd_vector.c", "fwd_custom.c", "fwd_linalg.c", "fwd_mathmem.c"])
def test_program_ad_before_opt(conf_build, conf_run_ok, source):
    env = {"ENZYME_BUILD_AD_BEFORE_OPT": "1"}
    assert conf_run_ok(conf_build(source, env_extra=env)) == CHECKS[source]


def test_struct_by_value_in_registers(conf_build, conf_run_ok):
    assert conf_run_ok(conf_build("fwd_structreg.c")) == 6


def test_float_pair_by_value(tmp_path, conf_build, conf_run_ok):
    """A {float, float} struct by value (one <2 x float> register): right tangents, the pair
    differentiated lane by lane (stage.vector_lane_entries; fwd-12, refused before)."""
    exe = os.path.join(os.path.dirname(sys.executable), "enzyme-build")
    out = tmp_path / "fpair"
    proc = subprocess.run([exe, "cc", "-O2", "-I.", "-I../../../acceptance", "fwd_fpair.c", "-o", str(out), "-lm"], cwd=PROGRAMS_DIR,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert conf_run_ok(str(out)) == 2


@pytest.mark.parametrize("opt", ["-O2", "-O0"])
def test_nested_second_derivatives(conf_build, conf_run_ok, opt):
    assert conf_run_ok(conf_build("fwd_nested.c", opt)) == 14


def test_const_table_ad_before_opt(conf_build, conf_run_ok):
    assert conf_run_ok(conf_build("fwd_abi.c", env_extra={"ENZYME_BUILD_AD_BEFORE_OPT": "1"})) == 19


def test_thread_local_accumulator(conf_build, conf_run_ok):
    assert conf_run_ok(conf_build("fwd_tls.c")) == 4


def test_callback_argument(conf_build, conf_run_ok):
    assert conf_run_ok(conf_build("fwd_callback.c")) == 2


def test_hessian_with_workspace(conf_build, conf_run_ok):
    assert conf_run_ok(conf_build("fwd_hessian.c")) == 18


def test_callback_in_struct(conf_build, conf_run_ok):
    assert conf_run_ok(conf_build("fwd_gsl_direct.c")) == 3
