"""Reverse-mode conformance: everyday C (float vector reductions, restrict, 2-D parameters,
double**, shadow structs with pointer members, static counters, alloca, bit tricks)."""
import pytest

from rev_helpers import build_and_run


@pytest.mark.parametrize("opt,extra,env", [("-O2", [], {}), ("-O0", [], {}), ("-O1", [], {}),
                                           ("-O3", ["-ffast-math", "-march=native"], {}),
                                           ("-O2", ["-g"], {}),
                                           ("-O2", [], {"ENZYME_BUILD_AD_BEFORE_OPT": "1"})],
                         ids=["O2", "O0", "O1", "O3-fast-native", "g", "ad-before-opt"])
def test_misc(tmp_path, opt, extra, env):
    assert build_and_run(tmp_path, "misc.c", opt=opt, extra=extra, env_extra=env) >= 245
