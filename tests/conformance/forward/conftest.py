"""Helpers of the forward/vector conformance programs: build with the venv's enzyme-build, run, read `ok N`."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROGRAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs")
# where the self-check header every conformance program includes lives: the acceptance programs'
HCHECK_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "acceptance")
ENZYME_BUILD = os.path.join(os.path.dirname(sys.executable), "enzyme-build")


def build_program(source: str, workdir: str, opt: str = "-O2", extra=(), env_extra=None) -> str:
    """`enzyme-build cc|c++ OPT -I. -I<hcheck.h dir> SRC -o EXE -lm` in PROGRAMS; returns EXE (asserts the
    build succeeded)."""
    driver = "c++" if source.endswith((".cc", ".cpp")) else "cc"
    exe = os.path.join(workdir, os.path.splitext(source)[0] + opt.replace(" ", "").replace("-", "_"))
    env = dict(os.environ, **(env_extra or {}))
    cmd = [ENZYME_BUILD, driver, *opt.split(), "-I.", "-I" + HCHECK_DIR, *extra, source, "-o", exe, "-lm"]
    proc = subprocess.run(cmd, cwd=PROGRAMS, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout}{proc.stderr}"
    return exe


def run_ok(exe: str) -> int:
    """Run EXE; assert exit 0 and a final `ok N` line; returns N."""
    proc = subprocess.run([exe], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert lines and lines[-1].startswith("ok "), proc.stdout + proc.stderr
    return int(lines[-1].split()[1])


@pytest.fixture
def conf_build(tmp_path):
    def _build(source, opt="-O2", extra=(), env_extra=None):
        return build_program(source, str(tmp_path), opt, extra, env_extra)
    return _build


@pytest.fixture
def conf_run_ok():
    return run_ok
