"""Reverse-mode conformance: loop shapes and memory shapes, at several -O levels."""
import pytest

from rev_helpers import build_and_run

LEVELS = [("-O2", {}), ("-O0", {}), ("-O1", {}), ("-O3", {}), ("-Os", {}),
          ("-O2", {"ENZYME_BUILD_AD_BEFORE_OPT": "1"})]
IDS = ["O2", "O0", "O1", "O3", "Os", "ad-before-opt"]


@pytest.mark.parametrize("opt,env", LEVELS, ids=IDS)
def test_loops(tmp_path, opt, env):
    assert build_and_run(tmp_path, "loops.c", opt=opt, env_extra=env) >= 180


@pytest.mark.parametrize("opt,env", LEVELS, ids=IDS)
def test_memory(tmp_path, opt, env):
    assert build_and_run(tmp_path, "memory.c", opt=opt, env_extra=env) >= 192


def test_memory_debug_info(tmp_path):
    assert build_and_run(tmp_path, "memory.c", opt="-O2", extra=["-g"]) >= 192
