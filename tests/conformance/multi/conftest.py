"""Helpers of the multi-file conformance tests: copy a project to a temp dir, run commands there."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

PROGRAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs")
# the self-check header every conformance program includes: the acceptance programs' own
HCHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "acceptance", "hcheck.h")
ENZYME_BUILD = os.path.join(os.path.dirname(sys.executable), "enzyme-build")
CLANG = shutil.which("clang-22") or "/usr/lib/llvm-22/bin/clang"


def run_in(workdir: str, cmd, env_extra=None, timeout=300) -> subprocess.CompletedProcess:
    env = dict(os.environ, **(env_extra or {}))
    return subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, env=env, timeout=timeout)


def ok_count(proc: subprocess.CompletedProcess) -> int:
    """Assert exit 0 and a final `ok N` line; returns N."""
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert lines and lines[-1].startswith("ok "), proc.stdout + proc.stderr
    return int(lines[-1].split()[1])


@pytest.fixture
def project(tmp_path):
    """project(name) -> a fresh copy of programs/<name> (str path), with hcheck.h beside its sources."""
    def _copy(name):
        dest = tmp_path / name
        shutil.copytree(os.path.join(PROGRAMS, name), dest)
        shutil.copy(HCHECK, dest)
        return str(dest)
    return _copy


class _Tools:
    """What a multi-file test needs, handed out as one fixture (conftest modules are not importable by name)."""
    enzyme_build = ENZYME_BUILD
    clang = CLANG
    run = staticmethod(run_in)
    ok = staticmethod(ok_count)


@pytest.fixture
def mt():
    return _Tools
