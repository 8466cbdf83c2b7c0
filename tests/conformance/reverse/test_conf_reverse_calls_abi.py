"""Reverse-mode conformance: calls (recursion, activity per site, struct returns,
out-params) and ABI variations (user-defined markers, defaults, struct returns)."""
import pytest

from rev_helpers import build_and_run


@pytest.mark.parametrize("opt,env", [("-O2", {}), ("-O0", {}), ("-O3", {}),
                                     ("-O2", {"ENZYME_BUILD_AD_BEFORE_OPT": "1"})],
                         ids=["O2", "O0", "O3", "ad-before-opt"])
@pytest.mark.parametrize("program,checks", [("calls.c", 45), ("abi.c", 57)])
def test_program(tmp_path, program, checks, opt, env):
    assert build_and_run(tmp_path, program, opt=opt, env_extra=env) >= checks
