"""Compiled programs checked against finite differences, built through run_ad_stage directly."""
from __future__ import annotations

import os
import re

import pytest

from ad_helpers import EXAMPLES, HERE

PROGRAMS = os.path.join(HERE, "programs")


@pytest.mark.parametrize("name", ["relu3", "norm", "split_mode"])
def test_shared_examples(build, run_ok, name):
    assert run_ok(build(os.path.join(EXAMPLES, name + ".c"))) > 0


@pytest.mark.parametrize("name,extra", [
    ("arith", ()),
    ("math", ()),
    ("math", ("-fno-math-errno",)),     # intrinsics (llvm.sin.f64, frem…) instead of libm calls
    ("control", ()),
    ("memory", ()),
    ("calls", ()),
    ("split", ()),
    ("split_kept", ()),
    ("split_kept", ("-O0",)),
    ("split_kept", ("-Denzyme_not_overwritten=enzyme_nocache",)),   # Enzyme's newer spelling
    ("side_tables", ("-DCHECK_TAPE",)),
    ("side_tables", ("-O0", "-DCHECK_TAPE")),
    ("custom", ()),
    ("patterns", ()),
    ("globals", ()),
    ("copies", ()),
    ("heapvla", ()),
    ("realloc", ()),
    ("mixed", ()),
    ("byval", ()),
    ("tapes", ()),
    ("aliasing", ()),
    ("undo", ()),
    ("augret", ()),
    ("realworld", ()),
    ("libm_more", ()),
    ("longdouble", ()),
    ("globalstruct", ()),
    ("recordcopy", ()),
    ("globalcalls", ()),
    ("libm_pairs", ()),
    ("libm_pairs", ("-ffast-math",)),   # sin+cos merged into llvm.sincos
    ("fused", ()),
    ("fused", ("-fno-math-errno",)),    # sqrt as llvm.sqrt: the x * sqrt(x) pattern after O2
])
def test_programs(build, run_ok, name, extra):
    assert run_ok(build(os.path.join(PROGRAMS, name + ".c"), extra=extra)) > 0


def test_byval_at_O0(build, run_ok):
    """Structs passed by value keep their private copy in combined and split mode (-O0 front end)."""
    assert run_ok(build(os.path.join(PROGRAMS, "byval.c"), opt="-O0")) == 12


def test_cxx_over_aligned_new_delete(build, run_ok):
    """operator new(size, align) gets a shadow of its size (the alignment was taken for it in
    reverse mode) and the over-aligned delete is a free (reverse mode refused it)."""
    assert run_ok(build(os.path.join(PROGRAMS, "aligned_new.cc"))) == 7


def test_cxx_new_delete(build, run_ok):
    assert run_ok(build(os.path.join(PROGRAMS, "cxx.cc"), cxx=True)) > 0


def test_ad_before_opt(build, run_ok):
    """The ablation path (only SROA before AD) gives the same derivatives."""
    assert run_ok(build(os.path.join(EXAMPLES, "norm.c"), ad_before_opt=True)) > 0
    assert run_ok(build(os.path.join(PROGRAMS, "control.c"), ad_before_opt=True)) > 0
    assert run_ok(build(os.path.join(PROGRAMS, "side_tables.c"), ad_before_opt=True)) > 0


def test_frontend_at_O0(build, run_ok):
    """-O0 frontends mark functions optnone/noinline; the stage still optimizes before AD."""
    assert run_ok(build(os.path.join(EXAMPLES, "relu3.c"), opt="-O0")) > 0
    assert run_ok(build(os.path.join(PROGRAMS, "calls.c"), opt="-O0")) > 0


def test_cxx_vectors_and_invokes(build, run_ok):
    assert run_ok(build(os.path.join(PROGRAMS, "vector.cc"), cxx=True)) == 4


def test_cxx_vectors_at_O0(build, run_ok):
    """-O0 code keeps std::vector's accessors as calls returning pointers into its buffer."""
    assert run_ok(build(os.path.join(PROGRAMS, "vector.cc"), cxx=True, opt="-O0")) == 4


def test_realworld_at_O0(build, run_ok):
    """At -O0 the logging helper and the switch over AD calls stay as written."""
    assert run_ok(build(os.path.join(PROGRAMS, "realworld.c"), opt="-O0")) == 16


@pytest.mark.parametrize("opt", ["-O0", "-O1"])
def test_libm_more_other_levels(build, run_ok, opt):
    assert run_ok(build(os.path.join(PROGRAMS, "libm_more.c"), opt=opt)) == 8


def test_libm_more_ad_before_opt(build, run_ok):
    """Without the pre-AD pipeline modf stays a libm call with an out-parameter."""
    assert run_ok(build(os.path.join(PROGRAMS, "libm_more.c"), ad_before_opt=True)) == 8


def test_longdouble_at_O0(build, run_ok):
    assert run_ok(build(os.path.join(PROGRAMS, "longdouble.c"), opt="-O0")) == 17


def test_globalstruct_at_O0(build, run_ok):
    assert run_ok(build(os.path.join(PROGRAMS, "globalstruct.c"), opt="-O0")) == 5


@pytest.mark.parametrize("name", ["recordcopy", "globalcalls"])
def test_globals_and_records_at_O0(build, run_ok, name):
    assert run_ok(build(os.path.join(PROGRAMS, name + ".c"), opt="-O0")) == 12


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_global_pointers_and_repeated_calls(build, run_ok, opt):
    """A read-only table reached through a pointer held in a global stays untouched (no
    shadow aliasing the primal), and float/array statics read before written give the same
    gradient on every combined and split call (shadow globals start clean)."""
    assert run_ok(build(os.path.join(PROGRAMS, "global_pointers.c"), opt=opt)) == 19


def test_libm_pairs_at_O0(build, run_ok):
    assert run_ok(build(os.path.join(PROGRAMS, "libm_pairs.c"), opt="-O0")) == 9


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_small_constant_loops(build, run_ok, tmp_path, opt):
    """Loops of a small constant trip count inside run-time loops (3-vector components in an
    array of structs, a 3x3 rotation, a fixed 5-tap stencil, a degree-6 polynomial) are
    unrolled completely before AD, so the engine sees one loop level fewer (and SROA gets
    the small arrays they index); a 1000-iteration constant loop stays a loop. Gradients in
    combined and split mode against central differences."""
    assert run_ok(build(os.path.join(PROGRAMS, "small_loops.c"), opt=opt)) == 122
    text = open(os.path.join(str(tmp_path), "keep", "ad-input.ll")).read()

    def loops(name: str) -> int:   # loop latches (each carries !llvm.loop)
        body = text[text.index(f"@{name}("):].split("\n}\n")[0]
        return len(re.findall(r"!llvm\.loop ", body))
    assert loops("poly6") == 1 and loops("sum1000") == 1
    assert loops("pairs") <= 4 and loops("taps") <= 4, text
    assert "[3 x [3 x double]]" not in text[text.index("@rotate("):].split("\n}\n")[0]
