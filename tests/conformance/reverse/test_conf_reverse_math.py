"""Reverse-mode conformance: math.h in double and float, under several math flags."""
import pytest

from rev_helpers import build_and_run


@pytest.mark.parametrize("flags", [["-O2"], ["-O2", "-ffast-math"], ["-O2", "-fno-math-errno"], ["-O0"]],
                         ids=["O2", "fast-math", "no-math-errno", "O0"])
def test_mathfns(tmp_path, flags):
    assert build_and_run(tmp_path, "mathfns.c", opt=flags[0], extra=flags[1:]) >= 120


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_missing_libm(tmp_path, opt):
    assert build_and_run(tmp_path, "missing_libm.c", opt=opt) == 2


def test_switch_table(tmp_path):
    assert build_and_run(tmp_path, "switch_table.c") == 4
    assert build_and_run(tmp_path, "switch_table.c", opt="-O0") == 4


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_int_libm(tmp_path, opt):
    assert build_and_run(tmp_path, "int_libm.c", opt=opt) == 1


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_outparam_libm(tmp_path, opt):
    assert build_and_run(tmp_path, "outparam_libm.c", opt=opt) == 1


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_complex(tmp_path, opt):
    assert build_and_run(tmp_path, "complex.c", opt=opt) == 4


@pytest.mark.parametrize("opt", ["-O2", "-O0"])
def test_skip_nan(tmp_path, opt):
    # the NaN skipped is computed anyway once the skip is a select: its partials get a
    # strong zero (analysis/speculation.py; tests/ad/test_guarded_singularities.py)
    build_and_run(tmp_path, "skip_nan.c", opt=opt)


@pytest.mark.parametrize("opt,extra", [("-O2", []), ("-O2", ["-ffast-math"]), ("-O0", [])],
                         ids=["O2", "fast-math", "O0"])
def test_gnu_libm(tmp_path, opt, extra):
    assert build_and_run(tmp_path, "gnu_libm.c", opt=opt, extra=extra) == 3
