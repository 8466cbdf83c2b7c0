"""A real library packaged with no glue: examples/multisource (n-body, a hand-written derivative
for its kernel), from its sources and from its header plus a fat static library."""
from __future__ import annotations

import os
import subprocess

import pytest

from package_helpers import ENZYME_BUILD, build, run_script

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MULTISOURCE = os.path.join(ROOT, "examples", "multisource")
SOURCES = [os.path.join(MULTISOURCE, f"{name}.c") for name in ("forces", "integrate", "kernel_rules")]
EXPORTS = ("phys_energy(state[6*n], mass[n], n)",
           "phys_simulate(inout:state[6*n], mass[n], n, steps, dt)")

CHECK = """
import numpy as np
import torch
import nbody
rng = np.random.default_rng(0)
state, mass = rng.normal(size=18), np.array([1.0, 2.0, 0.5])
gradient, mass_gradient = nbody.phys_energy.vjp(state, mass, cotangents=[1.0])
h = 1e-6
for i in range(18):
    e = np.zeros(18); e[i] = h
    fd = (nbody.phys_energy(state + e, mass) - nbody.phys_energy(state - e, mass)) / (2 * h)
    assert abs(fd - gradient[i]) < 1e-6 * max(1.0, abs(fd)), (i, fd, gradient[i])
s = torch.tensor(state, requires_grad=True)
m = torch.tensor(mass, requires_grad=True)
assert torch.autograd.gradcheck(lambda s, m: nbody.torch.phys_simulate(s, m, 5, 0.01), (s, m))
energy = nbody.torch.phys_energy(nbody.torch.phys_simulate(s, m, 20, 0.01), m)
energy.backward()
assert torch.isfinite(s.grad).all() and torch.isfinite(m.grad).all()
print("ok")
"""


def test_package_from_sources(tmp_path):
    out = build(SOURCES, "nbody", tmp_path / "pkg", EXPORTS, extra=("-O2",))
    assert run_script(CHECK, str(out)).strip() == "ok"


def test_package_from_header_and_fat_library(tmp_path):
    objects = []
    for source in SOURCES:
        obj = tmp_path / (os.path.basename(source)[:-2] + ".o")
        proc = subprocess.run([ENZYME_BUILD, "cc", "-O2", "-fPIC", "-c", source, "-o", str(obj)],
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        objects.append(str(obj))
    subprocess.run(["ar", "rcs", str(tmp_path / "libphysics.a"), *objects], check=True)
    out = build([os.path.join(MULTISOURCE, "physics.h"), str(tmp_path / "libphysics.a")], "nbody",
                tmp_path / "pkg", EXPORTS)
    assert run_script(CHECK, str(out)).strip() == "ok"


@pytest.mark.parametrize("args, message", [
    ([os.path.join(MULTISOURCE, "physics.h")], "headers declare the functions but nothing provides their code"),
])
def test_header_alone_is_an_error(tmp_path, args, message):
    proc = subprocess.run([ENZYME_BUILD, "package", *args, "--name", "nbody", "-o", "out",
                           "--export", EXPORTS[0]], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 1 and message in proc.stderr
    assert os.listdir(tmp_path) == []
