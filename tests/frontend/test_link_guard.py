"""A fat object that calls __enzyme_* cannot be linked into a silently broken library.

Linked by anything but enzyme-build, such an object has no derivatives: an executable
fails on the undefined __enzyme_autodiff, but a shared library links (undefined symbols
are allowed there) and fails only when loaded. The object therefore references a hidden
symbol only our link step defines, and every other link stops naming it.
"""
from __future__ import annotations

import shutil
import subprocess

import pytest

from enzyme_build.link.guard import LINK_GUARD
from test_failure_handling import ENZYME_BUILD
from test_shared_library_inputs import LIB, USE


@pytest.fixture
def objects(tmp_path):
    (tmp_path / "use.c").write_text(USE)
    (tmp_path / "lib.c").write_text(LIB)
    for source in ("use.c", "lib.c"):
        done = subprocess.run([ENZYME_BUILD, "cc", "-O2", "-fPIC", "-c", source], cwd=tmp_path,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    return tmp_path


def sections(path) -> str:
    readelf = shutil.which("llvm-readelf-22") or "readelf"
    return subprocess.run([readelf, "-S", str(path)], capture_output=True, text=True).stdout


@pytest.mark.parametrize("link", [["-shared"], ["-shared", "-Wl,--gc-sections"], ["-shared", "-fuse-ld=lld"], []])
def test_other_links_fail_naming_the_guard(objects, link):
    clang = shutil.which("clang-22")
    done = subprocess.run([clang, *link, "use.o", "lib.o", "-o", "out"], cwd=objects,
                          capture_output=True, text=True)
    assert done.returncode != 0
    assert LINK_GUARD in done.stderr or "__enzyme_autodiff" in done.stderr, done.stderr
    if link and link[0] == "-shared":
        assert LINK_GUARD in done.stderr, done.stderr


def test_only_objects_calling_enzyme_are_guarded(objects):
    assert "enzyme_build_link_guard" in sections(objects / "use.o")
    assert "enzyme_build_link_guard" not in sections(objects / "lib.o")
    assert ".enzbc" in sections(objects / "use.o")  # the bitcode survives the guard's merge


def test_enzyme_build_links_guarded_objects(objects):
    done = subprocess.run([ENZYME_BUILD, "cc", "-O2", "use.o", "lib.o", "-o", "prog"], cwd=objects,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert subprocess.run([str(objects / "prog")], capture_output=True, text=True).stdout == "12\n"
    done = subprocess.run([ENZYME_BUILD, "cc", "-O2", "-shared", "use.o", "lib.o", "-o", "libok.so"],
                          cwd=objects, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    nm = shutil.which("llvm-nm-22") or "nm"
    exported = subprocess.run([nm, "-D", "--defined-only", str(objects / "libok.so")],
                              capture_output=True, text=True).stdout
    assert LINK_GUARD not in exported and "main" in exported


def test_objects_for_another_target_are_guarded_alike(tmp_path):
    """--target=aarch64-linux-gnu: the guard is assembled for that target and merged with lld."""
    (tmp_path / "g.c").write_text("double __enzyme_autodiff(void *, ...);\n"
                                  "double sq(double x) { return x * x; }\n"
                                  "double g(double x) { return __enzyme_autodiff((void *)sq, x); }\n")
    done = subprocess.run([ENZYME_BUILD, "cc", "--target=aarch64-linux-gnu", "-O2", "-c", "g.c"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0 and "warning" not in done.stderr, done.stderr
    table = sections(tmp_path / "g.o")
    assert "enzyme_build_link_guard" in table and ".enzbc" in table
    readelf = shutil.which("llvm-readelf-22") or "readelf"
    header = subprocess.run([readelf, "-h", str(tmp_path / "g.o")], capture_output=True, text=True).stdout
    assert "AArch64" in header
