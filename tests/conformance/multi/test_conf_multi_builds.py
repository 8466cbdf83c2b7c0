"""Multi-file builds of one model library: separate -c and link, one-shot, static archive via
`ar rcs` and `-L. -lmodel`, a Makefile with -MMD, split mode across TUs, main in an archive."""
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


SPLIT_SOURCES = ["main.c", "layer.c", "forward.c", "backward.c", "markers.c"]


def test_split_mode_across_tus_with_enzyme_cc_and_response_file(project, mt):
    """Tape made in one TU, consumed in another; markers defined by the program; compiled with
    the enzyme-cc entry point, linked through an @response file."""
    d = project("split")
    enzyme_cc = os.path.join(os.path.dirname(mt.enzyme_build), "enzyme-cc")
    for src in SPLIT_SOURCES:
        proc = mt.run(d, [enzyme_cc, "-O2", "-I.", "-c", src, "-o", src[:-2] + ".o"])
        assert proc.returncode == 0, proc.stderr
    with open(os.path.join(d, "link.rsp"), "w") as fh:
        fh.write(" ".join(s[:-2] + ".o" for s in SPLIT_SOURCES) + " -o prog -lm\n")
    link = mt.run(d, [enzyme_cc, "-O2", "@link.rsp"])
    assert link.returncode == 0, link.stderr
    assert mt.ok(mt.run(d, ["./prog"])) == 27


def test_split_mode_across_tus_o0(project, mt):
    d = project("split")
    proc = mt.run(d, [mt.enzyme_build, "cc", "-O0", "-I.", *SPLIT_SOURCES, "-o", "prog", "-lm"])
    assert proc.returncode == 0, proc.stderr
    assert mt.ok(mt.run(d, ["./prog"])) == 27


def test_ad_calls_only_inside_archive_members(project, mt):
    """The gradient wrappers (the only __enzyme_* calls) are archive members; the main object
    is built once with enzyme-build and once by plain clang."""
    d = project("proj")
    lib = ["model.c", "kernels.c", "rules.c", "util.c", "wrappers.c"]
    for src in lib:
        proc = mt.run(d, [mt.enzyme_build, "cc", "-O2", "-I.", "-c", src, "-o", src[:-2] + ".o"])
        assert proc.returncode == 0, proc.stderr
    assert mt.run(d, ["ar", "rcs", "libmodel.a", *[s[:-2] + ".o" for s in lib]]).returncode == 0
    proc = mt.run(d, [mt.enzyme_build, "cc", "-O2", "-I.", "use_ar.c", "-L.", "-lmodel", "-o", "prog", "-lm"])
    assert proc.returncode == 0, proc.stderr
    assert mt.ok(mt.run(d, ["./prog"])) == 7
    assert mt.run(d, [mt.clang, "-O2", "-I.", "-c", "use_ar.c", "-o", "use_ar.o"]).returncode == 0
    proc = mt.run(d, [mt.enzyme_build, "cc", "-O2", "use_ar.o", "-L.", "-lmodel", "-o", "prog2", "-lm"])
    assert proc.returncode == 0, proc.stderr
    assert mt.ok(mt.run(d, ["./prog2"])) == 7


def test_main_in_archive(project, mt):
    """Every object, main.o included, in one archive; the link names only -lall."""
    d = project("proj")
    _compile_all(mt, d)
    assert mt.run(d, ["ar", "rcs", "liball.a", *[s[:-2] + ".o" for s in SOURCES]]).returncode == 0
    link = mt.run(d, [mt.enzyme_build, "cc", "-O2", "-L.", "-lall", "-o", "prog", "-lm"])
    assert link.returncode == 0, link.stderr
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


def test_archives_in_a_link_group(project, mt):
    """Two archives that need each other's members, named by path and by -l inside --start-group."""
    d = project("proj")
    _compile_all(mt, d)
    assert mt.run(d, ["ar", "rcs", "libB.a", "kernels.o", "util.o"]).returncode == 0
    assert mt.run(d, ["ar", "rcs", "libA.a", "model.o", "rules.o"]).returncode == 0
    for libs in (["-Wl,--start-group", "libB.a", "libA.a", "-Wl,--end-group"],
                 ["-L.", "-Wl,--start-group", "-lB", "-lA", "-Wl,--end-group"]):
        link = mt.run(d, [mt.enzyme_build, "cc", "-O2", "main.o", *libs, "-o", "prog", "-lm"])
        assert link.returncode == 0, link.stderr
        assert mt.ok(mt.run(d, ["./prog"])) == CHECKS


def test_hessian_vector_product_over_archived_gradient(project, mt):
    """Forward mode over the gradient wrapper (reverse mode with the user's rules inside), which
    lives in an archive member of another TU."""
    d = project("proj")
    lib = ["model.c", "kernels.c", "rules.c", "util.c", "wrappers.c"]
    for src in lib:
        proc = mt.run(d, [mt.enzyme_build, "cc", "-O2", "-I.", "-c", src, "-o", src[:-2] + ".o"])
        assert proc.returncode == 0, proc.stderr
    assert mt.run(d, ["ar", "rcs", "libmodel.a", *[s[:-2] + ".o" for s in lib]]).returncode == 0
    proc = mt.run(d, [mt.enzyme_build, "cc", "-O2", "-I.", "hvp.c", "-L.", "-lmodel", "-o", "hvp", "-lm"])
    assert proc.returncode == 0, proc.stderr
    assert mt.ok(mt.run(d, ["./hvp"])) == 8
