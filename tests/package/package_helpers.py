"""Helpers for tests/package: the real `enzyme-build package` command, and a runner for Python
scripts in fresh interpreters (the package and frameworks loaded there, as a user would)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "programs")
ENZYME_BUILD = os.path.join(os.path.dirname(sys.executable), "enzyme-build")
PHYSICS_EXPORTS = (
    "energy(x[n], n, k)",
    "residual(p[n], n, r[n])",
    "energyf(x[n], n, k)",
    "damp(inout:y[n], n, a)",
    "gather(A[m*n], m, n, idx[m], s)",
    "count_positive(x[n], n)",
)


def run_package(args, cwd, **kwargs):
    return subprocess.run([ENZYME_BUILD, "package", *args], cwd=cwd, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=600, **kwargs)


def build(source_paths, name, out_dir, exports, extra=()):
    args = [*source_paths, *extra, "--name", name, "-o", str(out_dir)]
    for spec in exports:
        args += ["--export", spec]
    proc = run_package(args, cwd=os.path.dirname(str(out_dir)))
    assert proc.returncode == 0, proc.stderr
    return out_dir


def run_script(script: str, path: str, timeout: int = 600, env_extra=None) -> str:
    """Run script in a fresh interpreter with `path` on sys.path; its stdout, or a failure."""
    env = dict(os.environ, PYTHONPATH=str(path), JAX_PLATFORMS="cpu", PYTHONDONTWRITEBYTECODE="1")
    env.update(env_extra or {})
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True,
                          text=True, env=env, cwd=str(path), stdin=subprocess.DEVNULL, timeout=timeout)
    assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc.stdout
