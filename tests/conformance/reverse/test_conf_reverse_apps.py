"""Reverse-mode conformance: small applications end to end (Lennard-Jones with periodic
images, implicit heat equation, softmax cross-entropy, adaptive stepping, bisection +
Newton) and call-site argument conversions."""
import pytest

from rev_helpers import build_and_run


@pytest.mark.parametrize("opt,env", [("-O2", {}), ("-O0", {}), ("-O3", {}),
                                     ("-O2", {"ENZYME_BUILD_AD_BEFORE_OPT": "1"})],
                         ids=["O2", "O0", "O3", "ad-before-opt"])
@pytest.mark.parametrize("program,checks", [("apps.c", 37), ("conversions.c", 10)])
def test_apps(tmp_path, program, checks, opt, env):
    assert build_and_run(tmp_path, program, opt=opt, env_extra=env) == checks


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_big_sizes(tmp_path, opt):
    assert build_and_run(tmp_path, "big.c", opt=opt) == 8
