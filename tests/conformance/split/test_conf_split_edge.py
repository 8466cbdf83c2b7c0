"""Split-mode corners: local arrays passed to callees, freed heap workspaces, dupnoneed
outputs, float scalars, tapes held in structs, many augment/reverse pairs."""
import pytest

from split_helpers import build_and_run


@pytest.mark.parametrize("opt,env", [("-O2", {}), ("-O0", {}), ("-O3", {}),
                                     ("-O2", {"ENZYME_BUILD_AD_BEFORE_OPT": "1"})],
                         ids=["O2", "O0", "O3", "ad-before-opt"])
def test_split_edge(tmp_path, opt, env):
    assert build_and_run(tmp_path, "split_edge.c", opt=opt, env_extra=env) >= 37


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_tape_reuse(tmp_path, opt):
    assert build_and_run(tmp_path, "tape_reuse.c", opt=opt) == 36


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_threads(tmp_path, opt):
    assert build_and_run(tmp_path, "threads.c", opt=opt, extra=["-pthread"]) == 32
