"""Reverse-mode conformance: arithmetic, conversions, long double."""
import pytest

from rev_helpers import build_and_run


def test_arith(tmp_path):
    assert build_and_run(tmp_path, "arith.c") >= 50


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_long_double(tmp_path, opt):
    assert build_and_run(tmp_path, "long_double.c", opt=opt) == 1


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_long_double_abi(tmp_path, opt):
    assert build_and_run(tmp_path, "long_double_abi.c", opt=opt) == 4
