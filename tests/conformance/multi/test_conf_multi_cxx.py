"""A C++ project over four TUs (templates and inline operators in a header, out-of-line methods,
a custom rule attached in the header to a function defined with its rules in another TU)."""
from __future__ import annotations

import os

SOURCES = ["main.cc", "system.cc", "rules.cc"]
CHECKS = 18


def test_separate_compile_archive_and_link(project, mt):
    d = project("cxxproj")
    for src in SOURCES:
        proc = mt.run(d, [mt.enzyme_build, "c++", "-O2", "-I.", "-c", src, "-o", src[:-3] + ".o"])
        assert proc.returncode == 0, proc.stderr
    assert mt.run(d, ["ar", "rcs", "libsys.a", "system.o", "rules.o"]).returncode == 0
    link = mt.run(d, [mt.enzyme_build, "c++", "-O2", "main.o", "-L.", "-lsys", "-o", "prog"])
    assert link.returncode == 0, link.stderr
    assert mt.ok(mt.run(d, ["./prog"])) == CHECKS


def test_one_shot_o0(project, mt):
    d = project("cxxproj")
    proc = mt.run(d, [mt.enzyme_build, "c++", "-O0", "-I.", *SOURCES, "-o", "prog"])
    assert proc.returncode == 0, proc.stderr
    assert mt.ok(mt.run(d, ["./prog"])) == CHECKS


def test_make_with_enzyme_cxx(project, mt):
    """make's implicit C++ rules with CXX=enzyme-c++, -MMD dependency files, nothing to redo after."""
    d = project("cxxproj")
    cxx = "CXX=" + os.path.join(os.path.dirname(mt.enzyme_build), "enzyme-c++")
    proc = mt.run(d, ["make", "-j2", cxx])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert mt.ok(mt.run(d, ["./prog"])) == CHECKS
    with open(os.path.join(d, "system.d")) as fh:
        assert "system.hpp" in fh.read()
    assert mt.run(d, ["make", "-q", cxx]).returncode == 0
