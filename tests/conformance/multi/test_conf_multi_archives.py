"""Archives in the link: AD calls only inside members, main inside an archive, link groups,
and forward mode over an archived gradient (Hessian-vector products)."""
from __future__ import annotations

SOURCES = ["main.c", "model.c", "kernels.c", "rules.c", "util.c"]
CHECKS = 17


def _compile_all(mt, d, opt="-O2"):
    for src in SOURCES:
        proc = mt.run(d, [mt.enzyme_build, "cc", opt, "-I.", "-c", src, "-o", src[:-2] + ".o"])
        assert proc.returncode == 0, proc.stderr


def _model_library(mt, d):
    """libmodel.a: the model, its kernels and rules, and the gradient wrappers, as fat objects."""
    lib = ["model.c", "kernels.c", "rules.c", "util.c", "wrappers.c"]
    for src in lib:
        proc = mt.run(d, [mt.enzyme_build, "cc", "-O2", "-I.", "-c", src, "-o", src[:-2] + ".o"])
        assert proc.returncode == 0, proc.stderr
    assert mt.run(d, ["ar", "rcs", "libmodel.a", *[s[:-2] + ".o" for s in lib]]).returncode == 0


def test_ad_calls_only_inside_archive_members(project, mt):
    """The gradient wrappers (the only __enzyme_* calls) are archive members; the main object
    is built once with enzyme-build and once by plain clang."""
    d = project("proj")
    _model_library(mt, d)
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
    _model_library(mt, d)
    proc = mt.run(d, [mt.enzyme_build, "cc", "-O2", "-I.", "hvp.c", "-L.", "-lmodel", "-o", "hvp", "-lm"])
    assert proc.returncode == 0, proc.stderr
    assert mt.ok(mt.run(d, ["./hvp"])) == 8
