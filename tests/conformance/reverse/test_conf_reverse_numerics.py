"""Reverse-mode conformance: numerical kernels (LU with pivoting, Cholesky, CSR, scatter,
Jacobi to tolerance, struct arrays copied with memcpy, globals updated across calls)."""
import pytest

from rev_helpers import build_and_run


@pytest.mark.parametrize("opt,env", [("-O2", {}), ("-O0", {}), ("-O1", {}), ("-O3", {}),
                                     ("-O2", {"ENZYME_BUILD_AD_BEFORE_OPT": "1"})],
                         ids=["O2", "O0", "O1", "O3", "ad-before-opt"])
def test_numerics(tmp_path, opt, env):
    assert build_and_run(tmp_path, "numerics.c", opt=opt, env_extra=env) >= 111


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_mixed_memcpy(tmp_path, opt):
    assert build_and_run(tmp_path, "mixed_memcpy.c", opt=opt) == 4
