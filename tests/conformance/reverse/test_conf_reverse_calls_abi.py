"""Reverse-mode conformance: calls (recursion, activity per site, struct returns,
out-params) and ABI variations (user-defined markers, defaults, struct returns)."""
import pytest

from rev_helpers import build_and_run


@pytest.mark.parametrize("opt,env", [("-O2", {}), ("-O0", {}), ("-O3", {}),
                                     ("-O2", {"ENZYME_BUILD_AD_BEFORE_OPT": "1"})],
                         ids=["O2", "O0", "O3", "ad-before-opt"])
@pytest.mark.parametrize("program,checks", [("calls.c", 45), ("abi.c", 57), ("many_scalars.c", 13),
                                            ("float_double_decl.c", 2)])
def test_program(tmp_path, program, checks, opt, env):
    assert build_and_run(tmp_path, program, opt=opt, env_extra=env) >= checks


def test_fnptr_table(tmp_path):
    build_and_run(tmp_path, "fnptr_table.c")


def test_virtual(tmp_path):
    build_and_run(tmp_path, "virtual.cc")


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_callback_rk4(tmp_path, opt):
    assert build_and_run(tmp_path, "callback_rk4.c", opt=opt) == 6


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_second_order(tmp_path, opt):
    assert build_and_run(tmp_path, "second_order.c", opt=opt) == 3


@pytest.mark.parametrize("opt", ["-O0", "-O1", "-O2", "-O3"])
def test_byval_double(tmp_path, opt):
    assert build_and_run(tmp_path, "byval_double.c", opt=opt) == 6


# rev-21/rev-22: structs coerced to <2 x float> / a packed i64 across non-inlined calls
# (enzyme_build/ad/boundaries.py; more members of the class in tests/ad/test_coerced_boundaries.py)
@pytest.mark.parametrize("program", ["float_pair_byval.c", "byval_structs.c"])
@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_float_pair_byval(tmp_path, program, opt):
    build_and_run(tmp_path, program, opt=opt)


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_float_int_byval(tmp_path, opt):
    assert build_and_run(tmp_path, "float_int_byval.c", opt=opt) == 4


@pytest.mark.parametrize("program", ["float_pair_byval.c", "float_int_byval.c"])
def test_coerced_structs_ad_before_opt(tmp_path, program):
    build_and_run(tmp_path, program, env_extra={"ENZYME_BUILD_AD_BEFORE_OPT": "1"})


def test_second_order_arrays(tmp_path):
    build_and_run(tmp_path, "second_order_arrays.c")
