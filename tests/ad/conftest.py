"""Fixtures for the AD tests (helpers live in ad_helpers.py, importable by name)."""
from __future__ import annotations

import pytest

from ad_helpers import build_with_stage, run_program


@pytest.fixture
def build(tmp_path):
    def _build(source, **kw):
        return build_with_stage(source, str(tmp_path), **kw)
    return _build


@pytest.fixture
def run_ok():
    """Run an executable; assert it printed 'ok N' and exited 0; returns N."""
    def _run(exe):
        proc = run_program(exe)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        last = proc.stdout.strip().splitlines()[-1]
        assert last.startswith("ok "), proc.stdout + proc.stderr
        return int(last.split()[1])
    return _run
