"""Build and run helpers of the BLAS tests (the real CLI, as a user runs it)."""
from __future__ import annotations

import os
import subprocess
import sys

ENZYME_BUILD = os.path.join(os.path.dirname(sys.executable), "enzyme-build")
REFERENCE_DIR = "/usr/lib/x86_64-linux-gnu/blas"                 # libblas-dev: reference BLAS + CBLAS
REFERENCE_LAPACK_DIR = "/usr/lib/x86_64-linux-gnu/lapack"        # liblapack-dev: reference LAPACK
OPENBLAS_DIR = "/usr/lib/x86_64-linux-gnu/openblas-pthread"       # libopenblas-dev: same sonames


def write(directory, name: str, text: str):
    path = directory / name
    path.write_text(text)
    return path


def build(directory, args, *flags) -> subprocess.CompletedProcess:
    return subprocess.run([ENZYME_BUILD, "cc", "-O2", *flags, *map(str, args)], cwd=directory,
                          capture_output=True, text=True, timeout=300)


def run(cmd, directory, env=None) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(c) for c in cmd], cwd=directory, capture_output=True, text=True,
                          timeout=120, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc
