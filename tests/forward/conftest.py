"""Fixtures of the forward-mode tests (helpers live in forward_helpers.py)."""
from __future__ import annotations

import os
import subprocess

import pytest

from forward_helpers import PROGRAMS, build_with_stage


@pytest.fixture
def build(tmp_path):
    def _build(source, **kw):
        return build_with_stage(os.path.join(PROGRAMS, source), str(tmp_path), **kw)
    return _build


@pytest.fixture
def run_ok():
    """Run an executable; assert it printed 'ok N' and exited 0; returns N."""
    def _run(exe):
        proc = subprocess.run([exe], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        last = proc.stdout.strip().splitlines()[-1]
        assert last.startswith("ok "), proc.stdout + proc.stderr
        return int(last.split()[1])
    return _run
