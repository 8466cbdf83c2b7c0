"""C99 variable-length arrays whose scope ends before the reverse sweep needs their adjoints.

The class: a VLA (`double v[n]`, `double S[n][n]`) filled from the inputs inside a block, a
loop body or a function that clang brackets with `llvm.stacksave` / `llvm.stackrestore`,
followed by code that uses the stack again (a call with locals of its own). In a combined
gradient the forward sweep copied the restore: the VLA's shadow, an alloca next to it, was
released with it, the following calls wrote their frames over it, and the reverse sweep then
accumulated the VLA's adjoints into those bytes -- silently wrong gradients at -O2 and with
AD before optimization (a Cholesky log-determinant of a VLA matrix after an LU of a local
array: 6 of 64 components zero). The shadow of an array a restore may release is now a zeroed
heap block, freed where the reverse sweep passes the array (as split pieces always did).
Checked in reverse and forward mode against central differences at -O0, -O2 and with AD
before optimization.
"""
from __future__ import annotations

import pytest

from ad_helpers import FD_HEAD, LEVELS, check_fd_rows, fd_main, fd_rows

# a function that writes a frame of its own over whatever the stack held below the caller's
CLOBBER = r"""
__attribute__((noinline)) static double scratch(const double *x, int n) {
  volatile double w[96];
  for (int i = 0; i < 96; i++) w[i] = 1e3 * x[i % n] + i;
  double s = 0;
  for (int i = 0; i < 96; i++) s += w[i] * w[(7 * i) % 96];
  return 1e-9 * s;
}
"""

PROGRAMS = {
    # a VLA in a block, then a call reusing the stack
    "block": CLOBBER + r"""
static volatile int N = 4;
double f(const double *x) {
  int n = N;
  double r = 0;
  {
    double v[n];
    for (int i = 0; i < n; i++) v[i] = sin(x[i]) + x[(i + 1) % n];
    for (int i = 0; i < n; i++) r += v[i] * v[(i + 1) % n];
  }
  return r + scratch(x, n);
}
""",
    # a VLA per loop iteration (released every iteration), read after the next one's call
    "loop_body": CLOBBER + r"""
static volatile int N = 4;
double f(const double *x) {
  int n = N;
  double r = 0;
  for (int t = 0; t < 3; t++) {
    double v[n + t];
    for (int i = 0; i < n + t; i++) v[i] = x[i % n] * (t + 1) + cos(x[(i + t) % n]);
    double s = 0;
    for (int i = 0; i < n + t; i++) s += v[i] * v[i];
    r += sqrt(s) + scratch(x, n);
  }
  return r;
}
""",
    # a 2-D VLA matrix passed to a Cholesky log-determinant with its own VLA factor
    "cholesky": CLOBBER + r"""
static volatile int N = 4;
static double logdet(int n, double S[n][n]) {
  double L[n][n];
  double ld = 0;
  for (int j = 0; j < n; j++) {
    double d = S[j][j];
    for (int k = 0; k < j; k++) d -= L[j][k] * L[j][k];
    L[j][j] = sqrt(d);
    ld += log(L[j][j]);
    for (int i = j + 1; i < n; i++) {
      double s = S[i][j];
      for (int k = 0; k < j; k++) s -= L[i][k] * L[j][k];
      L[i][j] = s / L[j][j];
    }
  }
  return ld;
}
double f(const double *x) {
  int n = N;
  double r;
  {
    double S[n][n];
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) S[i][j] = (i == j) + 0.1 * x[i] * x[j];
    r = logdet(n, S);
  }
  return r + scratch(x, n);
}
""",
    # a VLA in a noinline helper called twice: each call restores the stack on return
    "helper": CLOBBER + r"""
static volatile int N = 4;
__attribute__((noinline)) static double energy(const double *x, int n, double c) {
  double v[n];
  for (int i = 0; i < n; i++) v[i] = c * x[i] - x[(i + 1) % n];
  double e = 0;
  for (int i = 0; i < n; i++) e += v[i] * v[i] * v[i];
  return e + scratch(x, n);
}
double f(const double *x) {
  int n = N;
  return energy(x, n, 1.5) + sin(energy(x, n, 0.5));
}
""",
}


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_vla_scopes(name, level, tmp_path):
    flags, env = LEVELS[level]
    text = FD_HEAD + PROGRAMS[name] + fd_main()
    check_fd_rows(fd_rows(tmp_path, text, flags, env), 4)
