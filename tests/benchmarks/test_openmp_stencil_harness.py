"""Smoke test of the OpenMP stencil benchmark (benchmarks/openmp_stencil.py) on a tiny grid: it
builds, checks its gradient against finite differences on 1 and 2 threads, prints a row per
thread count and the speedup line, and writes its plot. Not a timing test (the exit code
reports the targets, which a tiny grid on a shared machine need not meet)."""
from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "openmp_stencil.py"


@pytest.mark.skipif(not os.path.exists("/usr/lib/llvm-22/lib/libomp.so"), reason="needs libomp-22-dev")
def test_tiny_run(tmp_path):
    proc = subprocess.run([sys.executable, str(SCRIPT), "--size", "48", "--reps", "3", "--results", str(tmp_path)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    assert "gradient check failed" not in proc.stdout + proc.stderr
    for threads in (1, 2):
        assert f"\n| {threads} | " in proc.stdout, proc.stdout
    assert "gradient speedup 1 -> 2 threads: " in proc.stdout
    root = ET.parse(tmp_path / "openmp_stencil.svg").getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
