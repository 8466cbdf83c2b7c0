"""Split-mode conformance: tapes alive across other AD calls, seeds set late,
caller-owned tapes, {tape, primal} returns, active scalars from the reverse call."""
import pytest

from split_helpers import build_and_run


@pytest.mark.parametrize("opt,env", [("-O2", {}), ("-O0", {}), ("-O1", {}), ("-O3", {}), ("-Os", {}),
                                     ("-O2", {"ENZYME_BUILD_AD_BEFORE_OPT": "1"})],
                         ids=["O2", "O0", "O1", "O3", "Os", "ad-before-opt"])
def test_split_basic(tmp_path, opt, env):
    assert build_and_run(tmp_path, "split_basic.c", opt=opt, env_extra=env) >= 73


def test_split_basic_debug_info(tmp_path):
    assert build_and_run(tmp_path, "split_basic.c", opt="-O2", extra=["-g"]) >= 73


def test_split_basic_fast_native(tmp_path):
    assert build_and_run(tmp_path, "split_basic.c", opt="-O3", extra=["-ffast-math", "-march=native"]) >= 73
