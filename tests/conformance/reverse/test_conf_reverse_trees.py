"""Reverse-mode conformance: heap-built trees and lists evaluated recursively, recursive
struct returns, in combined and split mode."""
import pytest

from rev_helpers import build_and_run


@pytest.mark.parametrize("opt", ["-O2", "-O3"])
def test_tree(tmp_path, opt):
    assert build_and_run(tmp_path, "tree.c", opt=opt) == 30


@pytest.mark.parametrize("opt", ["-O2", "-O3"])
def test_null_arg_ctor(tmp_path, opt):
    assert build_and_run(tmp_path, "null_arg_ctor.c", opt=opt) == 6


def test_tree_o0(tmp_path):
    assert build_and_run(tmp_path, "tree.c", opt="-O0") == 30


# rev-16 (fixed): a helper called with a literal NULL at one site and with shadowed pointers
# at others, not inlined (-O0, AD before optimization): the NULL is passed with a null shadow
@pytest.mark.parametrize("opt,env", [("-O0", {}), ("-O2", {"ENZYME_BUILD_AD_BEFORE_OPT": "1"})],
                         ids=["O0", "ad-before-opt"])
def test_null_arg_ctor_o0(tmp_path, opt, env):
    assert build_and_run(tmp_path, "null_arg_ctor.c", opt=opt, env_extra=env) == 6
