"""benchmarks/package_overhead.py runs end to end (a smoke run: no timing is asserted)."""
from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_overhead_benchmark_quick_run(tmp_path):
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "package_overhead.py"), "--quick",
                           "--repeat", "1", "--results", str(tmp_path)], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=600)
    assert proc.returncode == 0, proc.stderr
    for row in ("numpy primal", "numpy vjp", "torch forward (graph)", "torch forward+backward",
                "jax jit forward", "jax jit grad"):
        assert row in proc.stdout
    assert (tmp_path / "package_overhead.svg").read_text().startswith("<svg")
