"""Inner loops that sweep the same elements of a heap block in every iteration of a loop
around them.

The class: a triangular or dense product against a scratch vector rewritten once per outer
step (`for i: for j <= i: t += L[i][j] * v[j]`, GMM's `Q * (x - mu)`, a quadratic form), where
the address of `v[j]` moves only with the inner loop's IV, two loops deep or three; in C with
malloc'd blocks and in C++ with std::vector and a helper. The reverse sweep keeps `v[j]` once
per (i, j) read. Copying the block once per outer step instead (a snapshot) was tried: it
halved the tape of such loops but made no gradient faster where the inner loop keeps other
values too (n-body's pair loop: split pieces 1.0x -> 1.08-1.24x their combined gradient), so
it was not kept (docs/engine.md, "Snapshots of overwritten blocks").

Each member is checked against central differences in reverse and forward mode at -O0, -O2
and with AD before optimization, as are two neighbours of the class: `v` written between the
sweeps (an in-place forward substitution), and a sweep whose address also moves with the
outer loop (each element read once per step).
"""
from __future__ import annotations

import pytest

from ad_helpers import CXX_FD_HEAD, CXX_FD_MAIN, FD_HEAD, LEVELS, check_gradients, fd_main

PRELUDE = "static volatile int dim = 6, count = 5;\n"

PROGRAMS = {
    # lower-triangular factor times a shifted sample, squared norm summed over samples
    "lower_triangular": PRELUDE + r"""
double f(const double *x) {
  int d = dim, n = count;
  double *L = malloc(sizeof(double) * d * d), *v = malloc(sizeof(double) * d);
  for (int i = 0; i < d * d; i++) L[i] = 0.1 * x[i % 4] + 0.01 * i;
  double s = 0;
  for (int k = 0; k < n; k++) {
    for (int i = 0; i < d; i++) v[i] = x[(k + i) % 4] - 0.1 * i;
    for (int i = 0; i < d; i++) {
      double t = 0;
      for (int j = 0; j <= i; j++) t += L[i * d + j] * v[j];
      s += t * t;
    }
  }
  free(L); free(v);
  return s;
}
""",
    # the upper triangle, a row starting at the diagonal; the elements from a math call
    "upper_triangular": PRELUDE + r"""
double f(const double *x) {
  int d = dim, n = count;
  double *v = malloc(sizeof(double) * d);
  double s = 0;
  for (int k = 0; k < n; k++) {
    for (int i = 0; i < d; i++) v[i] = sin(x[(k * 3 + i) % 4] * (1 + 0.1 * i));
    for (int i = 0; i < d; i++) {
      double t = 0;
      for (int j = i; j < d; j++) t += (1.0 + 0.05 * (i - j)) * v[j] * v[j];
      s += t * x[i % 4];
    }
  }
  free(v);
  return s;
}
""",
    # one scratch vector against a row of weights from the inputs: a dense sweep per row
    "dense_rows": PRELUDE + r"""
double f(const double *x) {
  int d = dim, n = count;
  double *v = malloc(sizeof(double) * d);
  double s = 0;
  for (int k = 0; k < n; k++) {
    for (int i = 0; i < d; i++) v[i] = x[(k + 2 * i) % 4] * x[i % 4];
    for (int i = 0; i < d; i++) {
      double t = 0;
      for (int j = 0; j < d; j++) t += v[j] * (x[(i + j) % 4] + 0.1 * i);
      s += sqrt(t * t + 1.0) * x[(i + k) % 4];
    }
  }
  free(v);
  return s;
}
""",
    # two loops around the sweep: passes over rows, rows, then the elements
    "two_levels": PRELUDE + r"""
double f(const double *x) {
  int d = dim, n = count;
  double *v = malloc(sizeof(double) * d);
  double s = 0;
  for (int k = 0; k < n; k++) {
    for (int i = 0; i < d; i++) v[i] = x[(k + i) % 4] * (0.5 + 0.1 * i);
    for (int p = 0; p < 3; p++)
      for (int i = 0; i < d; i++) {
        double t = 0;
        for (int j = 0; j <= i; j++) t += v[j] * cos(v[j] + p);
        s += t * t * 0.01;
      }
  }
  free(v);
  return s;
}
""",
}

NOT_SERVED = {
    # v[i] is overwritten after its row's sweep: a forward substitution in place
    "written_between_sweeps": PRELUDE + r"""
double f(const double *x) {
  int d = dim, n = count;
  double *v = malloc(sizeof(double) * d);
  double s = 0;
  for (int k = 0; k < n; k++) {
    for (int i = 0; i < d; i++) v[i] = x[(k + i) % 4] + 0.2 * i;
    for (int i = 0; i < d; i++) {
      double t = v[i];
      for (int j = 0; j < i; j++) t -= 0.3 * v[j] * x[j % 4];
      v[i] = t / (2.0 + x[i % 4] * x[i % 4]);
    }
    for (int i = 0; i < d; i++) s += v[i] * v[i];
  }
  free(v);
  return s;
}
""",
    # the address moves with the row too: each element is read once per step
    "row_major_once": PRELUDE + r"""
double f(const double *x) {
  int d = dim, n = count;
  double *m = malloc(sizeof(double) * d * d);
  double s = 0;
  for (int k = 0; k < n; k++) {
    for (int i = 0; i < d * d; i++) m[i] = x[(k + i) % 4] * (1 + 0.01 * i);
    for (int i = 0; i < d; i++) {
      double t = 0;
      for (int j = 0; j < d; j++) t += m[i * d + j] * m[i * d + j];
      s += log(t + 1.0);
    }
  }
  free(m);
  return s;
}
""",
}

CXX_PROGRAMS = {
    # std::vector scratch and factor, the quadratic form through a helper
    "vector_quadratic_form": r"""
#include <vector>
static volatile int dim = 5, count = 4;
static double row_dot(const std::vector<double> &L, const std::vector<double> &v, int i, int d) {
  double t = 0;
  for (int j = 0; j <= i; j++) t += L[i * d + j] * v[j];
  return t;
}
double f(const double *x) {
  const int d = dim, n = count;
  std::vector<double> L(d * d), v(d);
  for (int i = 0; i < d * d; i++) L[i] = 0.2 * x[(i + 1) % 4] - 0.03 * i;
  double s = 0;
  for (int k = 0; k < n; k++) {
    for (int i = 0; i < d; i++) v[i] = x[(k + i) % 4] * x[(k + 1) % 4];
    for (int i = 0; i < d; i++) { double t = row_dot(L, v, i, d); s += t * t; }
  }
  return s;
}
""",
}


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(PROGRAMS) + sorted(NOT_SERVED))
def test_programs_of_the_class(name, level, tmp_path):
    check_gradients(tmp_path, FD_HEAD + {**PROGRAMS, **NOT_SERVED}[name] + fd_main(4), *LEVELS[level])


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(CXX_PROGRAMS))
def test_cxx_programs_of_the_class(name, level, tmp_path):
    check_gradients(tmp_path, CXX_FD_HEAD + CXX_PROGRAMS[name] + CXX_FD_MAIN, *LEVELS[level], cxx=True)
