"""Inner loops that sweep the same elements of a heap block in every iteration of a loop
around them: snapshots of the block.

The class: a triangular or dense product against a scratch vector rewritten once per outer
step (`for i: for j <= i: t += L[i][j] * v[j]`, GMM's `Q * (x - mu)`, a quadratic form, a
Gram matrix), where the address of `v[j]` moves only with the inner loop's IV. The reverse
sweep used to keep `v[j]` once per (i, j) read -- d(d+1)/2 cells per outer step for d
elements. When nothing in the loop around the sweep writes the block, the forward sweep now
copies it once and the reverse sweep reads `v[j]` back from the copy
(ad/cache.py, `CachePlanner._sweeps_again`).

Each member is checked against central differences in reverse and forward mode at -O0, -O2
and with AD before optimization. Members the snapshot must not serve stay right: `v` written
between the sweeps (an in-place triangular solve), and a sweep whose address also moves with
the outer loop (each element read once).
"""
from __future__ import annotations

import pytest

from ad_helpers import CXX_FD_HEAD, CXX_FD_MAIN, FD_HEAD, LEVELS, cache_plan, check_fd_rows, fd_main, fd_rows

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
    flags, env = LEVELS[level]
    text = FD_HEAD + {**PROGRAMS, **NOT_SERVED}[name] + fd_main(4)
    check_fd_rows(fd_rows(tmp_path, text, flags, env), 4)


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(CXX_PROGRAMS))
def test_cxx_programs_of_the_class(name, level, tmp_path):
    flags, env = LEVELS[level]
    check_fd_rows(fd_rows(tmp_path, CXX_FD_HEAD + CXX_PROGRAMS[name] + CXX_FD_MAIN, flags, env, cxx=True), 4)


def _loads_kept_in_loops(plan: str) -> list[list[str]]:
    """Rows of the plan for loads kept per execution of a loop's block (a tape or static
    record, a side table): the cells a snapshot saves."""
    rows = [line.split() for line in plan.splitlines() if line.startswith("  %")]
    return [r for r in rows if r[2] == "load" and "kept:" in r and "slot" not in " ".join(r)]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_swept_block_keeps_no_cell_per_read(name, tmp_path):
    """Each element read by the sweeps is served without a cell per read: from a snapshot,
    or rebuilt from the value stored (the dense member's products of inputs)."""
    plan = cache_plan(tmp_path, FD_HEAD + PROGRAMS[name] + fd_main(4))
    assert not _loads_kept_in_loops(plan), plan
    if name != "dense_rows":
        assert "snapshot of " in plan and "re-read from a snapshot" in plan, plan


def test_cxx_swept_vector_is_read_from_a_snapshot(tmp_path):
    plan = cache_plan(tmp_path, CXX_FD_HEAD + CXX_PROGRAMS["vector_quadratic_form"] + CXX_FD_MAIN, cxx=True)
    assert "re-read from a snapshot" in plan, plan
    assert not _loads_kept_in_loops(plan), plan


def test_a_block_written_between_the_sweeps_is_not_copied(tmp_path):
    """The copy taken before the rows would not hold the values the later rows read."""
    plan = cache_plan(tmp_path, FD_HEAD + NOT_SERVED["written_between_sweeps"] + fd_main(4))
    assert "re-read from a snapshot" not in plan, plan
