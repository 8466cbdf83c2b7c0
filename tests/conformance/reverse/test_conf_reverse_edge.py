"""Reverse-mode conformance corners: globals as parameters, float-IV time stepping,
in-place updates, aliased arguments, deep recursion, empty loops, variadic logging,
global structs, exit/abort/goto error paths, VLAs in recursion."""
import pytest

from rev_helpers import build_and_run


@pytest.mark.parametrize("opt,env", [("-O2", {}), ("-O0", {}), ("-O3", {}),
                                     ("-O2", {"ENZYME_BUILD_AD_BEFORE_OPT": "1"})],
                         ids=["O2", "O0", "O3", "ad-before-opt"])
@pytest.mark.parametrize("program,checks", [("edge.c", 28), ("logging.c", 4), ("error_paths.c", 30),
                                            ("pointers.c", 24)])
def test_edge(tmp_path, program, checks, opt, env):
    assert build_and_run(tmp_path, program, opt=opt, env_extra=env) >= checks


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_global_struct(tmp_path, opt):
    assert build_and_run(tmp_path, "global_struct.c", opt=opt) == 3


@pytest.mark.parametrize("opt,env", [("-O2", {}), ("-O0", {}), ("-O2", {"ENZYME_BUILD_AD_BEFORE_OPT": "1"})],
                         ids=["O2", "O0", "ad-before-opt"])
@pytest.mark.parametrize("program,checks", [("outputs.c", 35), ("outputs_aliasing.c", 20)])
def test_outputs_read_back(tmp_path, program, checks, opt, env):
    assert build_and_run(tmp_path, program, opt=opt, env_extra=env) == checks


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
@pytest.mark.parametrize("program,checks", [("warm_start.c", 3), ("repeated_state.c", 64)])
def test_state_between_calls(tmp_path, program, checks, opt):
    """Adjoints left in the engine's shadow globals do not leak into the next gradient call."""
    assert build_and_run(tmp_path, program, opt=opt) == checks


@pytest.mark.parametrize("opt,env", [("-O0", {}), ("-O2", {}),
                                     ("-O2", {"ENZYME_BUILD_AD_BEFORE_OPT": "1"})],
                         ids=["O0", "O2", "ad-before-opt"])
def test_struct_views(tmp_path, opt, env):
    assert build_and_run(tmp_path, "struct_views.c", opt=opt, env_extra=env) == 4
