"""Differentiable shared libraries: gradient wrappers exported from a .so (one-shot, from a
-fPIC fat object with hidden visibility, over an archive of rules) used from plain C and ctypes."""
from __future__ import annotations

import ctypes
import os

import numpy as np
import pytest


@pytest.fixture
def energy_lib(project, mt):
    d = project("shlib")
    proc = mt.run(d, [mt.enzyme_build, "cc", "-O2", "-shared", "-fPIC", "energy.c", "-o", "libenergy.so", "-lm"])
    assert proc.returncode == 0, proc.stderr
    return d


def test_shared_library_from_plain_c(energy_lib, mt):
    d = energy_lib
    proc = mt.run(d, [mt.clang, "-O2", "-I.", "use.c", "-L.", "-lenergy", "-Wl,-rpath,$ORIGIN", "-o", "use", "-lm"])
    assert proc.returncode == 0, proc.stderr
    assert mt.ok(mt.run(d, ["./use"])) == 10


def _energy(x):
    n = len(x)
    e = float(np.sum(np.log(np.cosh(x))))
    for i in range(n):
        for j in range(i + 1, n):
            dd = x[i] - x[j]
            e += (np.exp(-dd * dd) + 0.1 * dd ** 4) / (1.0 + j - i)
    return e


def test_shared_library_from_ctypes(energy_lib):
    lib = ctypes.CDLL(os.path.join(energy_lib, "libenergy.so"))
    dp = np.ctypeslib.ndpointer(dtype=np.float64, flags="C_CONTIGUOUS")
    lib.energy.restype = ctypes.c_double
    lib.energy.argtypes = [dp, ctypes.c_int]
    lib.energy_grad.restype = None
    lib.energy_grad.argtypes = [dp, dp, ctypes.c_int]
    lib.energy_dir.restype = ctypes.c_double
    lib.energy_dir.argtypes = [dp, dp, ctypes.c_int]
    x = np.array([0.2, -0.4, 1.1, 0.7, -1.5])
    assert lib.energy(x, len(x)) == pytest.approx(_energy(x), rel=1e-12)
    g = np.full_like(x, 123.0)  # the wrapper zeroes it first
    lib.energy_grad(x, g, len(x))
    h = 1e-6
    fd = np.array([(_energy(x + h * e) - _energy(x - h * e)) / (2 * h) for e in np.eye(len(x))])
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
    v = np.linspace(-1.0, 1.0, len(x))
    assert lib.energy_dir(x, v, len(x)) == pytest.approx(float(g @ v), rel=1e-12)
    lib.energy_dir2.restype = None
    lib.energy_dir2.argtypes = [dp, dp, dp, ctypes.c_int, dp]
    u = np.cos(np.arange(len(x)))
    two = np.zeros(2)
    lib.energy_dir2(x, v, u, len(x), two)  # width-2 forward mode behind the API
    np.testing.assert_allclose(two, [g @ v, g @ u], rtol=1e-12)


def test_shared_library_over_pic_archive_with_rules(project, mt):
    """A .so whose gradient wrappers reach the model (kernels, rules, registrations) only
    through an archive of -fPIC fat objects; called from ctypes."""
    d = project("proj")
    for src in ["model.c", "kernels.c", "rules.c", "util.c"]:
        proc = mt.run(d, [mt.enzyme_build, "cc", "-O2", "-fPIC", "-I.", "-c", src, "-o", src[:-2] + ".o"])
        assert proc.returncode == 0, proc.stderr
    assert mt.run(d, ["ar", "rcs", "libmodel.a", "model.o", "kernels.o", "rules.o", "util.o"]).returncode == 0
    proc = mt.run(d, [mt.enzyme_build, "cc", "-O2", "-shared", "-fPIC", "-I.", "wrappers.c", "-L.", "-lmodel",
                      "-o", "libwrap.so", "-lm"])
    assert proc.returncode == 0, proc.stderr
    lib = ctypes.CDLL(os.path.join(d, "libwrap.so"))
    dp = np.ctypeslib.ndpointer(dtype=np.float64, flags="C_CONTIGUOUS")
    lib.loss_grad.restype = None
    lib.loss_grad.argtypes = [dp, dp, dp, dp, ctypes.c_int]
    lib.chain_tangent.restype = ctypes.c_double
    lib.chain_tangent.argtypes = [ctypes.c_double, ctypes.c_double]
    w = np.array([0.3, 0.7, -1.1, 0.4])
    x = np.array([1.5, -0.5, 0.25, 2.0])
    dw, dx = np.full(4, 9.0), np.full(4, 9.0)  # the wrapper zeroes both
    lib.loss_grad(w, dw, x, dx, 4)
    # the rules' closed forms: softclip' = 3, d dotw/dw = 2x, fastexp' = 7, noise inactive, my_log1p like log1p
    want = 6.0 * x
    want[0] += 7.0
    want[1] += np.sin(1e4 * w[1])
    want[2] += 2 * w[2] / (1 + w[2] ** 2)
    np.testing.assert_allclose(dw, want, rtol=1e-9)
    np.testing.assert_allclose(dx, 3.0 * w, rtol=1e-12)
    assert lib.chain_tangent(0.6, 1.0) == pytest.approx(-2.0 * 1.2 + 1.0, rel=1e-12)


def test_shared_library_hidden_visibility_soname(project, mt):
    """Separate -fPIC fat object, -fvisibility=hidden (the API is marked default), a soname."""
    d = project("shlib")
    proc = mt.run(d, [mt.enzyme_build, "cc", "-O2", "-fPIC", "-fvisibility=hidden", "-c", "energy.c", "-o", "energy.o"])
    assert proc.returncode == 0, proc.stderr
    proc = mt.run(d, [mt.enzyme_build, "cc", "-O2", "-shared", "energy.o", "-o", "libenergy.so.1",
                      "-Wl,-soname,libenergy.so.1", "-lm"])
    assert proc.returncode == 0, proc.stderr
    os.symlink("libenergy.so.1", os.path.join(d, "libenergy.so"))
    proc = mt.run(d, [mt.clang, "-O2", "-I.", "use.c", "-L.", "-lenergy", "-Wl,-rpath,$ORIGIN", "-o", "use", "-lm"])
    assert proc.returncode == 0, proc.stderr
    assert mt.ok(mt.run(d, ["./use"])) == 10
    syms = mt.run(d, ["nm", "-D", "--defined-only", "libenergy.so.1"]).stdout
    assert "energy_grad" in syms and "diffe" not in syms and "fwddiffe" not in syms


def test_shared_library_gradients_from_threads(energy_lib, mt):
    """Four threads calling the gradient wrapper at once get the single-threaded answer."""
    d = energy_lib
    proc = mt.run(d, [mt.clang, "-O2", "-I.", "threads.c", "-L.", "-lenergy", "-Wl,-rpath,$ORIGIN", "-pthread",
                      "-o", "threads", "-lm"])
    assert proc.returncode == 0, proc.stderr
    assert mt.ok(mt.run(d, ["./threads"])) == 4


def test_static_registered_helpers_stay_private(project, mt):
    d = project("statics")
    for lib in ("a", "b"):
        proc = mt.run(d, [mt.enzyme_build, "cc", "-O2", "-shared", "-fPIC", f"lib{lib}.c", "-o", f"lib{lib}.so", "-lm"])
        assert proc.returncode == 0, proc.stderr
    syms = mt.run(d, ["nm", "-D", "--defined-only", "liba.so"]).stdout.split()
    proc = mt.run(d, [mt.clang, "main.c", "-L.", "-la", "-lb", "-Wl,-rpath,$ORIGIN", "-o", "main"])
    assert proc.returncode == 0, proc.stderr
    assert mt.ok(mt.run(d, ["./main"])) == 4
    assert "helper" not in syms
