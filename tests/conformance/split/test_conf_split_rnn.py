"""Split-mode conformance through time: tapes in an array (returned and caller-owned),
reversed backwards; recursion and float functions with {tape, primal} returns."""
import pytest

from split_helpers import build_and_run


@pytest.mark.parametrize("opt,env", [("-O2", {}), ("-O0", {}), ("-O3", {}),
                                     ("-O2", {"ENZYME_BUILD_AD_BEFORE_OPT": "1"})],
                         ids=["O2", "O0", "O3", "ad-before-opt"])
def test_split_rnn(tmp_path, opt, env):
    assert build_and_run(tmp_path, "split_rnn.c", opt=opt, env_extra=env) >= 155
