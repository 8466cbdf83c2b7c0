"""The fuzz oracle (`run.judge`) on program outputs: agreement of the modes and with the
differences, and the looser tolerances a program computing partly in float prints."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as fuzz  # noqa: E402


def output(rev, fwd, fd, steps=("1e-4", "1e-5", "1e-6"), tol=None):
    lines = ["VAL 1.5"] + ([f"TOL {tol}"] if tol else [])
    lines += [f"REV {i} {v!r}" for i, v in enumerate(rev)]
    lines += [f"FWD {i} {v!r}" for i, v in enumerate(fwd)]
    lines += [f"SPL {i} {v!r}" for i, v in enumerate(rev)]
    lines += [f"FD {h} {i} {v!r}" for h in steps for i, v in enumerate(fd)]
    return "\n".join(lines) + "\n"


def test_agreeing_modes_and_differences_are_ok():
    assert fuzz.judge(output([0.5, -2.0], [0.5, -2.0], [0.5 + 1e-9, -2.0]))[0] == "ok"


def test_a_dropped_path_is_wrong_even_when_the_modes_agree():
    outcome, detail = fuzz.judge(output([0.5, -2.0], [0.5, -2.0], [0.5, -1.25]))
    assert outcome == "wrong" and "x[1]: rev -2 != fd -1.25" in detail


def test_single_precision_tolerances():
    # modes rounding in float differ in the 7th digit; the differences are 1% off
    text = output([0.5, -2.0], [0.5000001, -2.0], [0.505, -2.0], steps=("1e-2", "1e-3", "1e-4"),
                  tol="1e-5 2e-2 2e-2")
    assert fuzz.judge(text)[0] == "ok"
    assert fuzz.judge(text.replace("TOL 1e-5 2e-2 2e-2\n", ""))[0] == "wrong"
    # a path dropped in float code still shows
    outcome, detail = fuzz.judge(output([0.5, -2.0], [0.5, -2.0], [0.5, -1.25], tol="1e-5 2e-2 2e-2"))
    assert outcome == "wrong" and "x[1]" in detail
