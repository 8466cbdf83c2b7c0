"""Split-mode conformance for C++ (enzyme-build c++): a layer class with vector members,
a templated activation, Vec3 operators."""
import pytest

from split_helpers import build_and_run


@pytest.mark.parametrize("opt,env", [("-O2", {}), ("-O0", {}), ("-O3", {}),
                                     ("-O2", {"ENZYME_BUILD_AD_BEFORE_OPT": "1"})],
                         ids=["O2", "O0", "O3", "ad-before-opt"])
def test_split_cxx(tmp_path, opt, env):
    assert build_and_run(tmp_path, "split_cxx.cc", opt=opt, env_extra=env) >= 22


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_split_float_template(tmp_path, opt):
    assert build_and_run(tmp_path, "split_float_template.cc", opt=opt) == 3
