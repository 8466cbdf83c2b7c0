"""Forward and vector-mode call errors: exit 1, one message naming the call and what is wrong, no output."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

ERRORS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs", "errors")

CASES = [
    ("width_few_tangents.c", ["__enzyme_fwddiff4", "parameter 2", "missing"]),
    ("width_result_too_small.c", ["__enzyme_fwddiff2", "4 tangents"]),
    ("width_not_constant.c", ["enzyme_width", "constant"]),
    ("out_in_forward.c", ["enzyme_out", "forward", "parameter 1"]),
]


@pytest.mark.parametrize("source,words", CASES)
def test_vector_call_error(tmp_path, source, words):
    exe = os.path.join(os.path.dirname(sys.executable), "enzyme-build")
    out = tmp_path / "prog"
    proc = subprocess.run([exe, "cc", "-O2", os.path.join(ERRORS, source), "-o", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.startswith("enzyme-build: error:")
    for w in words:
        assert w in proc.stderr, proc.stderr
    assert not out.exists()
