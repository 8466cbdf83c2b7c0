"""Reverse-mode conformance: workspace allocators (aligned_alloc, bump arenas,
posix_memalign, alignment through uintptr_t)."""
import pytest

from rev_helpers import build_and_run


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_workspaces(tmp_path, opt):
    assert build_and_run(tmp_path, "workspaces.c", opt=opt) == 12


@pytest.mark.xfail(strict=True, reason="see failure rev-17")
def test_posix_memalign(tmp_path):
    build_and_run(tmp_path, "posix_memalign.c")


@pytest.mark.xfail(strict=True, reason="see failure rev-18")
def test_uintptr_align(tmp_path):
    build_and_run(tmp_path, "uintptr_align.c")
