"""Objects of one program compiled at different -O levels (one with -g), a C++ main over C
objects linked with `enzyme-build c++`, and a -static link."""
from __future__ import annotations

import os

import pytest

LIB = {"model.c": "-O3", "kernels.c": "-O1 -g", "rules.c": "-O2", "util.c": "-Os"}


def _objects(project, mt, main_opt="-O0"):
    d = project("proj")
    for src, opt in {"main.c": main_opt, **LIB}.items():
        proc = mt.run(d, [mt.enzyme_build, "cc", *opt.split(), "-I.", "-c", src, "-o", src[:-2] + ".o"])
        assert proc.returncode == 0, proc.stderr
    return d


def test_mixed_optimization_levels(project, mt):
    d = _objects(project, mt)
    objs = ["main.o", "model.o", "kernels.o", "rules.o", "util.o"]
    for link_opt in ("-O2", "-O0"):
        proc = mt.run(d, [mt.enzyme_build, "cc", link_opt, *objs, "-o", "prog", "-lm"])
        assert proc.returncode == 0, proc.stderr
        assert mt.ok(mt.run(d, ["./prog"])) == 17


def test_cxx_main_over_c_objects_and_static_link(project, mt):
    d = _objects(project, mt)
    lib = ["model.o", "kernels.o", "rules.o", "util.o"]
    assert mt.run(d, [mt.enzyme_build, "c++", "-O2", "-I.", "-c", "cmain.cc", "-o", "cmain.o"]).returncode == 0
    proc = mt.run(d, [mt.enzyme_build, "c++", "-O2", "cmain.o", *lib, "-o", "cprog"])
    assert proc.returncode == 0, proc.stderr
    assert mt.ok(mt.run(d, ["./cprog"])) == 5
    proc = mt.run(d, [mt.enzyme_build, "cc", "-O2", "-static", "main.o", *lib, "-o", "sprog", "-lm"])
    assert proc.returncode == 0, proc.stderr
    assert mt.ok(mt.run(d, ["./sprog"])) == 17


def test_kernels_from_plain_object_wrapped_by_rules(project, mt):
    """softclip and dotw come from an object built by plain clang (no bitcode): their reverse
    rules are all reverse mode needs; forward mode through dotw (no forward rule, no body) is
    a clear error naming it."""
    d = project("proj")
    plain = mt.run(d, [mt.clang, "-O2", "-I.", "-Wno-unknown-attributes", "-c", "kernels.c", "-o", "kernels.o"])
    assert plain.returncode == 0, plain.stderr
    objs = ["main.o", "model.o", "util.o", "rules.o", "kernels.o"]
    for src in ["model.c", "util.c", "rules.c"]:
        proc = mt.run(d, [mt.enzyme_build, "cc", "-O2", "-I.", "-c", src, "-o", src[:-2] + ".o"])
        assert proc.returncode == 0, proc.stderr
    assert mt.run(d, [mt.enzyme_build, "cc", "-O2", "-I.", "-c", "main.c", "-o", "main.o"]).returncode == 0
    proc = mt.run(d, [mt.enzyme_build, "cc", "-O2", *objs, "-o", "prog", "-lm"])
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "dotw" in proc.stderr and "loss" in proc.stderr
    assert not os.path.exists(os.path.join(d, "prog"))
    proc = mt.run(d, [mt.enzyme_build, "cc", "-O2", "-I.", "-DKERNELS_WITHOUT_BODIES", "-c", "main.c", "-o", "main.o"])
    assert proc.returncode == 0, proc.stderr
    proc = mt.run(d, [mt.enzyme_build, "cc", "-O2", *objs, "-o", "prog", "-lm"])
    assert proc.returncode == 0, proc.stderr
    assert mt.ok(mt.run(d, ["./prog"])) == 16


def test_static_registrations_in_a_header_and_c99_inline(project, mt):
    d = project("hdrrules")
    for opt in ("-O0", "-O2"):
        for src in ("a.c", "main.c"):
            proc = mt.run(d, [mt.enzyme_build, "cc", opt, "-c", src, "-o", src[:-2] + ".o"])
            assert proc.returncode == 0, proc.stderr
        proc = mt.run(d, [mt.enzyme_build, "cc", opt, "a.o", "main.o", "-o", "prog", "-lm"])
        assert proc.returncode == 0, proc.stderr
        assert mt.ok(mt.run(d, ["./prog"])) == 2


def test_static_registered_helper_vs_plain_global(project, mt):
    d = project("statics")
    assert mt.run(d, [mt.clang, "-O2", "-c", "p2.c", "-o", "p2.o"]).returncode == 0
    proc = mt.run(d, [mt.enzyme_build, "cc", "-O2", "p1.c", "p2.o", "-o", "p1", "-lm"])
    assert proc.returncode == 0, proc.stderr
    out = mt.run(d, ["./p1"]).stdout
    assert "21 want 21" in out and "other 5 want 5" in out


@pytest.mark.parametrize("lto", ["-flto", "-flto=thin"])
def test_flto_objects(project, mt, lto):
    """-flto objects: either the AD link works on them, or the compile refuses -flto clearly."""
    d = project("lto")
    for src in ("a.c", "b.c", "main.c"):
        proc = mt.run(d, [mt.enzyme_build, "cc", "-O2", lto, "-c", src, "-o", src[:-2] + ".o"])
        if proc.returncode != 0:  # a clear refusal at compile time is acceptable
            assert proc.returncode == 1 and "Traceback" not in proc.stderr and "lto" in proc.stderr
            assert not os.path.exists(os.path.join(d, src[:-2] + ".o"))
            return
    proc = mt.run(d, [mt.enzyme_build, "cc", "-O2", lto, "a.o", "b.o", "main.o", "-o", "prog", "-lm"])
    assert proc.returncode == 0, proc.stderr
    out = mt.run(d, ["./prog"]).stdout
    assert "fwd 3.91822 rev 3.91822 want 3.91822" in out
