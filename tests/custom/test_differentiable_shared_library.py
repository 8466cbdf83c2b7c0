"""Differentiable shared libraries: a -shared -fPIC library built with enzyme-build exports
C gradient wrappers (which call __enzyme_autodiff inside), used from a plain C program
linked with the system compiler and from Python ctypes with numpy arrays."""
from __future__ import annotations

import ctypes
import shutil

import numpy as np
import pytest

from custom_helpers import CLANG, ENZYME_BUILD, run, write

LIBRARY = """\
#include <math.h>
extern int enzyme_dup, enzyme_const, enzyme_out;
void __enzyme_autodiff(void *, ...);
double __enzyme_autodiff_scalar(void *, ...);

/* a chain energy: springs between neighbours plus an on-site potential */
static double chain_energy(const double *x, int n, double k) {
  double e = 0.0;
  for (int i = 0; i + 1 < n; i++) { double d = x[i + 1] - x[i] - 1.0; e += 0.5 * k * d * d; }
  for (int i = 0; i < n; i++) e += cos(x[i]) * exp(-0.1 * x[i] * x[i]);
  return e;
}

double chain_value(const double *x, int n, double k) { return chain_energy(x, n, k); }

/* dx = d energy / d x (overwritten), returns d energy / d k */
double chain_gradient(const double *x, double *dx, int n, double k) {
  for (int i = 0; i < n; i++) dx[i] = 0.0;
  return __enzyme_autodiff_scalar((void *)chain_energy, enzyme_dup, x, dx, enzyme_const, n,
                                  enzyme_out, k);
}
"""

CLIENT = """\
#include <math.h>
#include <stdio.h>
double chain_value(const double *x, int n, double k);
double chain_gradient(const double *x, double *dx, int n, double k);
int main(void) {
  enum { N = 6 };
  double x[N], dx[N], k = 1.7;
  for (int i = 0; i < N; i++) x[i] = 1.1 * i + 0.05 * i * i;
  double dk = chain_gradient(x, dx, N, k);
  int bad = 0;
  for (int i = 0; i < N; i++) {
    double h = 1e-6, xp[N], xm[N];
    for (int j = 0; j < N; j++) xp[j] = xm[j] = x[j];
    xp[i] += h; xm[i] -= h;
    double fd = (chain_value(xp, N, k) - chain_value(xm, N, k)) / (2 * h);
    if (fabs(fd - dx[i]) > 1e-6 * fmax(1.0, fabs(fd))) { printf("dx[%d] %g vs %g\\n", i, dx[i], fd); bad++; }
  }
  double fdk = (chain_value(x, N, k + 1e-6) - chain_value(x, N, k - 1e-6)) / 2e-6;
  if (fabs(fdk - dk) > 1e-6 * fmax(1.0, fabs(fdk))) { printf("dk %g vs %g\\n", dk, fdk); bad++; }
  printf(bad ? "FAILED\\n" : "ok\\n");
  return bad != 0;
}
"""


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    work = tmp_path_factory.mktemp("shared")
    write(work, "chain.c", LIBRARY)
    proc = run([ENZYME_BUILD, "cc", "-O2", "-fPIC", "-shared", "chain.c", "-o", "libchain.so", "-lm"],
               work)
    assert proc.returncode == 0, proc.stderr
    return work


def test_shared_library_from_plain_c_program(library):
    write(library, "client.c", CLIENT)
    system_cc = shutil.which("cc") or CLANG
    proc = run([system_cc, "-O2", "client.c", "-o", "client", "-L.", "-lchain", "-Wl,-rpath,$ORIGIN",
                "-lm"], library)
    assert proc.returncode == 0, proc.stderr
    result = run(["./client"], library)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "ok"


def _numpy_energy(x: np.ndarray, k: float) -> float:
    d = np.diff(x) - 1.0
    return float(0.5 * k * np.sum(d * d) + np.sum(np.cos(x) * np.exp(-0.1 * x * x)))


def test_shared_library_from_python_ctypes(library):
    lib = ctypes.CDLL(str(library / "libchain.so"))
    pointer = np.ctypeslib.ndpointer(dtype=np.float64, flags="C_CONTIGUOUS")
    lib.chain_value.argtypes = [pointer, ctypes.c_int, ctypes.c_double]
    lib.chain_value.restype = ctypes.c_double
    lib.chain_gradient.argtypes = [pointer, pointer, ctypes.c_int, ctypes.c_double]
    lib.chain_gradient.restype = ctypes.c_double

    rng = np.random.default_rng(7)
    x = np.cumsum(rng.uniform(0.5, 1.5, size=11))
    k = 0.8
    assert lib.chain_value(x, x.size, k) == pytest.approx(_numpy_energy(x, k), rel=1e-12)

    dx = np.full_like(x, 123.0)   # overwritten, not accumulated into, by the wrapper
    dk = lib.chain_gradient(x, dx, x.size, k)
    h = 1e-6
    fd = np.array([(_numpy_energy(x + h * e, k) - _numpy_energy(x - h * e, k)) / (2 * h)
                   for e in np.eye(x.size)])
    np.testing.assert_allclose(dx, fd, rtol=1e-6, atol=1e-8)
    assert dk == pytest.approx((_numpy_energy(x, k + h) - _numpy_energy(x, k - h)) / (2 * h), rel=1e-6)
