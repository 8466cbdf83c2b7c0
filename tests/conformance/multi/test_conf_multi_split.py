"""Split mode across TUs: tapes made by __enzyme_augmentfwd in one file and consumed by
__enzyme_reverse in another, program-defined markers, enzyme-cc and @response files."""
from __future__ import annotations

import os


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
