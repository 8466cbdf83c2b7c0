"""Split-mode conformance: shadow globals shared by interleaved tapes, per-site callee
activity, int returns with outputs through memory."""
import pytest

from split_helpers import build_and_run


@pytest.mark.parametrize("opt,env", [("-O2", {}), ("-O0", {}), ("-O3", {}),
                                     ("-O2", {"ENZYME_BUILD_AD_BEFORE_OPT": "1"})],
                         ids=["O2", "O0", "O3", "ad-before-opt"])
def test_split_globals(tmp_path, opt, env):
    assert build_and_run(tmp_path, "split_globals.c", opt=opt, env_extra=env) == 20
