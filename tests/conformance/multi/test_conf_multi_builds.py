"""Multi-file builds of one model library: separate -c and link, one-shot, static archive via
`ar rcs` and `-L. -lmodel`, a Makefile with -MMD."""
from __future__ import annotations

import os
import time

import pytest

SOURCES = ["main.c", "model.c", "kernels.c", "rules.c", "util.c"]
CHECKS = 17


def _compile_all(mt, d, opt="-O2", env_extra=None):
    for src in SOURCES:
        proc = mt.run(d, [mt.enzyme_build, "cc", opt, "-I.", "-c", src, "-o", src[:-2] + ".o"], env_extra)
        assert proc.returncode == 0, proc.stderr


def test_separate_compile_then_link(project, mt):
    d = project("proj")
    _compile_all(mt, d)
    link = mt.run(d, [mt.enzyme_build, "cc", "-O2", *[s[:-2] + ".o" for s in SOURCES], "-o", "prog", "-lm"])
    assert link.returncode == 0, link.stderr
    assert mt.ok(mt.run(d, ["./prog"])) == CHECKS


@pytest.mark.parametrize("opt", ["-O0", "-O3"])
def test_one_shot_build(project, mt, opt):
    d = project("proj")
    proc = mt.run(d, [mt.enzyme_build, "cc", opt, "-I.", *SOURCES, "-o", "prog", "-lm"])
    assert proc.returncode == 0, proc.stderr
    assert mt.ok(mt.run(d, ["./prog"])) == CHECKS


def test_ad_before_opt_separate_objects(project, mt):
    d = project("proj")
    env = {"ENZYME_BUILD_AD_BEFORE_OPT": "1"}
    _compile_all(mt, d, env_extra=env)
    link = mt.run(d, [mt.enzyme_build, "cc", "-O2", *[s[:-2] + ".o" for s in SOURCES], "-o", "prog", "-lm"], env)
    assert link.returncode == 0, link.stderr
    assert mt.ok(mt.run(d, ["./prog"])) == CHECKS


def test_static_archive_of_fat_objects(project, mt):
    """Rules, registrations and kernels live only in archive members; the link must pull them in."""
    d = project("proj")
    _compile_all(mt, d)
    ar = mt.run(d, ["ar", "rcs", "libmodel.a", "model.o", "kernels.o", "rules.o", "util.o"])
    assert ar.returncode == 0, ar.stderr
    link = mt.run(d, [mt.enzyme_build, "cc", "-O2", "main.o", "-L.", "-lmodel", "-o", "prog", "-lm"])
    assert link.returncode == 0, link.stderr
    assert mt.ok(mt.run(d, ["./prog"])) == CHECKS


def test_make_with_mmd(project, mt):
    d = project("proj")
    cc = f"CC={mt.enzyme_build} cc"
    first = mt.run(d, ["make", "-j2", cc])
    assert first.returncode == 0, first.stdout + first.stderr
    assert mt.ok(mt.run(d, ["./prog"])) == CHECKS
    with open(os.path.join(d, "main.d")) as fh:
        deps = fh.read()
    assert deps.count("main.o:") == 1 and "model.h" in deps and "hcheck.h" in deps
    with open(os.path.join(d, "kernels.d")) as fh:
        assert "model.h" in fh.read()
    assert mt.run(d, ["make", "-q", cc]).returncode == 0  # nothing to do
    # a header change rebuilds every includer, and the result still holds
    stamp = time.time() + 2
    os.utime(os.path.join(d, "model.h"), (stamp, stamp))
    again = mt.run(d, ["make", cc])
    assert again.returncode == 0, again.stderr
    assert "kernels.c" in again.stdout and "-o prog" in again.stdout
    assert mt.ok(mt.run(d, ["./prog"])) == CHECKS


def test_one_compile_command_for_all_objects(project, mt):
    """`cc -c a.c b.c ...` makes every object in the current directory; the link writes into a subdirectory."""
    d = project("proj")
    proc = mt.run(d, [mt.enzyme_build, "cc", "-O2", "-I.", "-c", *SOURCES])
    assert proc.returncode == 0, proc.stderr
    os.mkdir(os.path.join(d, "bin"))
    link = mt.run(d, [mt.enzyme_build, "cc", "-O2", *[s[:-2] + ".o" for s in SOURCES], "-o", "bin/prog", "-lm"])
    assert link.returncode == 0, link.stderr
    assert mt.ok(mt.run(d, ["bin/prog"])) == CHECKS
