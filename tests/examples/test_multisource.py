"""examples/multisource builds with make (and SCons) and its optimization converges."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

BIN_DIR = os.path.dirname(sys.executable)
EXAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                       "examples", "multisource")
SOURCES = ["Makefile", "SConstruct", "physics.h", "forces.c", "integrate.c", "kernel_rules.c", "main.c"]


@pytest.fixture
def example_copy(tmp_path):
    """A clean copy of the example, so the test never writes into the checkout."""
    for name in SOURCES:
        shutil.copy(os.path.join(EXAMPLE, name), tmp_path / name)
    return tmp_path


def check_output(stdout: str) -> None:
    losses = [float(v) for v in re.findall(r"^iter +\d+ +loss (\S+)", stdout, re.MULTILINE)]
    assert len(losses) >= 2, stdout
    assert all(later < earlier for earlier, later in zip(losses, losses[1:])), losses
    error = float(re.search(r"max relative error (\S+)", stdout).group(1))
    assert error < 1e-4
    calls = int(re.search(r"hand-written kernel gradient calls: (\d+)", stdout).group(1))
    assert calls > 0   # the custom rule from physics.h was used
    final = [line for line in stdout.splitlines() if line.startswith("final:")][-1]
    assert final.startswith("final: loss") and final.endswith(": ok"), final
    final_loss, first_loss = map(float, re.search(r"loss (\S+) \(from (\S+)\)", final).groups())
    assert final_loss < 1e-6 * first_loss


def test_make_run(example_copy):
    cc = os.path.join(BIN_DIR, "enzyme-build") + " cc"
    proc = subprocess.run(["make", "-C", str(example_copy), "run", f"CC={cc}"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (example_copy / "libphysics.a").exists()
    members = subprocess.run(["ar", "t", str(example_copy / "libphysics.a")],
                             capture_output=True, text=True).stdout.split()
    assert members == ["forces.o", "integrate.o", "kernel_rules.o"]
    check_output(proc.stdout)
    clean = subprocess.run(["make", "-C", str(example_copy), "clean"], capture_output=True, text=True)
    assert clean.returncode == 0
    assert not (example_copy / "nbody").exists() and not (example_copy / "libphysics.a").exists()


def test_scons_build(example_copy):
    proc = subprocess.run([os.path.join(BIN_DIR, "scons"), "-Q"], cwd=example_copy,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run = subprocess.run(["./nbody"], cwd=example_copy, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    check_output(run.stdout)
