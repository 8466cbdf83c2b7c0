"""Scratch rows filled by one loop and read back by later loops of the same iteration: the
reverse sweep rebuilds the stored expression instead of keeping what the loads read.

The class: a buffer reused for every (point, component) pair or every row -- GMM's centred
vector `xc[j] = x[j] - mu[j]` read by the triangular product and the squared norm, a row of
differences read by a stencil (`g[i] - g[i - 1]`), a scaled copy read by a distance. The
cache planner used to keep every such load once per element and pair, since the buffer is
overwritten by the next pair. When the loop that wrote the row counts to the same bound as the
reading loop, nothing writes the row in between, and the stored value reads only memory the
function never writes, the reverse sweep now computes the value again from the store's
expression with the reader's index (ad/cache.py, `CachePlanner._forwarding`).

Each member is checked against central differences in reverse and forward mode at -O0, -O2
and with AD before optimization; the plans of the members must rebuild their reads. The cases
forwarding must not serve (the row changed between, read past what was written, filled only
on some iterations, filled from memory the function writes, updated in place by the reader, a
neighbour before the first written element) must stay right and keep their values.
"""
from __future__ import annotations

import pytest

import os

from ad_helpers import CXX_FD_HEAD, CXX_FD_MAIN, FD_HEAD, LEVELS, cache_plan, check_fd_rows, fd_main, fd_rows

DATA = "static const double data[48] = {" + ", ".join(f"{0.1 * ((7 * i) % 11) - 0.4:.2f}" for i in range(48)) + "};\n"
PRELUDE = "static volatile int dim = 4, points = 6;\n" + DATA

SERVED = {
    # GMM's inner step: a centred vector, a triangular product of it, the squared norm
    "centred_quadratic_form": PRELUDE + r"""
double f(const double *x) {
  int d = dim, n = points;
  double *xc = malloc(sizeof(double) * d), *qx = malloc(sizeof(double) * d);
  double s = 0;
  for (int p = 0; p < n; p++) {
    for (int j = 0; j < d; j++) xc[j] = data[p * d + j] - x[j];
    for (int i = 0; i < d; i++) qx[i] = exp(x[i]) * xc[i];
    for (int i = 0; i < d; i++)
      for (int j = i + 1; j < d; j++) qx[j] += 0.3 * x[(i + j) % 4] * xc[i];
    double q = 0;
    for (int i = 0; i < d; i++) q += qx[i] * qx[i];
    s += exp(-0.5 * q);
  }
  free(xc); free(qx);
  return log(s);
}
""",
    # the same through small helpers, as ADBench's C code writes it (inlined by -O2)
    "helpers_per_pair": PRELUDE + r"""
static void subtract(int d, const double *a, const double *b, double *out) {
  for (int j = 0; j < d; j++) out[j] = a[j] - b[j];
}
static double weighted_sqnorm(int d, const double *w, const double *v) {
  double s = 0;
  for (int j = 0; j < d; j++) s += w[j] * v[j] * v[j];
  return s;
}
double f(const double *x) {
  int d = dim, n = points;
  double *diff = malloc(sizeof(double) * d);
  double s = 0;
  for (int p = 0; p < n; p++)
    for (int k = 0; k < 2; k++) {
      subtract(d, data + (p + k) * d, x, diff);
      s += sin(weighted_sqnorm(d, x, diff)) * (k + 1);
    }
  free(diff);
  return s;
}
""",
    # a row of scaled values read with its left neighbour (a difference stencil)
    "row_with_left_neighbour": PRELUDE + r"""
double f(const double *x) {
  int n = points, m = dim;
  double *g = malloc(sizeof(double) * n);
  double s = 0;
  for (int r = 0; r < m; r++) {
    for (int j = 0; j < n; j++) g[j] = x[j % 4] * data[r * n + j] + 0.1 * j;
    for (int i = 1; i < n; i++) s += (g[i] - g[i - 1]) * (g[i] - g[i - 1]) * sin(g[i]);
  }
  free(g);
  return s;
}
""",
    # a fixed-size row on the stack, filled and read by loops over the same count
    "stack_row": PRELUDE + r"""
double f(const double *x) {
  int d = dim, n = points;
  double row[8], s = 0;
  for (int p = 0; p < n; p++) {
    for (int j = 0; j < d; j++) row[j] = x[j] * x[(j + 1) % 4] - data[p + j];
    for (int i = 0; i < d; i++) s += cos(row[i]) * x[i];
  }
  return s;
}
""",
}

# C++: a model object owning a std::vector scratch row, reused by a member function for
# every point (its constructor's length check may throw: a way that never returns, whose
# writes do not stop the input from being read again)
CXX_MODEL = "#include <vector>\n" + CXX_FD_HEAD + PRELUDE + r"""
struct Model {
  int d;
  std::vector<double> diff;
  explicit Model(int d) : d(d), diff(d) {}
  double mahalanobis(const double *pt, const double *mu) {
    for (int j = 0; j < d; j++) diff[j] = pt[j] - mu[j];
    double s = 0;
    for (int j = 0; j < d; j++) s += (1.0 + 0.1 * j) * diff[j] * diff[j];
    return s;
  }
};
extern "C" double f(const double *x) {
  Model m(dim);
  double s = 0;
  for (int p = 0; p < points; p++) s += std::exp(-0.5 * m.mahalanobis(data + p * 4, x));
  return std::log(s);
}
""" + CXX_FD_MAIN


@pytest.mark.parametrize("level", sorted(LEVELS))
def test_cxx_member(level, tmp_path):
    flags, env = LEVELS[level]
    check_fd_rows(fd_rows(tmp_path, CXX_MODEL, flags, env, cxx=True), 4)


def test_cxx_member_rebuilds_the_row(tmp_path):
    keep = os.path.join(str(tmp_path), "keep")
    fd_rows(tmp_path, CXX_MODEL, ["-O2"], {"ENZYME_BUILD_KEEP": keep}, cxx=True)
    with open(os.path.join(keep, "p.ad", "cache-plan.txt")) as fh:
        plan = fh.read().split("cache plan of @diffe_f (combined mode)", 1)[1].split("\n\n", 1)[0]
    rows = _rows(plan)
    assert [r[1] for r in rows if "rebuilt from its store" in " ".join(r)], plan
    assert not [r for r in rows if r[2] == "load" and "kept:" in r], plan


# forwarding must not serve these: the gradient stays right, the loads keep their values
NOT_SERVED = {
    # one element changed between the filling loop and the reading loop
    "changed_between": PRELUDE + r"""
double f(const double *x) {
  int d = dim, n = points;
  double *xc = malloc(sizeof(double) * d), s = 0;
  for (int p = 0; p < n; p++) {
    for (int j = 0; j < d; j++) xc[j] = data[p * d + j] - x[j];
    xc[p % d] = 0.5 * x[3] * x[p % 4];
    for (int i = 0; i < d; i++) s += sin(xc[i]) * x[i];
  }
  free(xc);
  return s;
}
""",
    # the reader goes one element past what the loop wrote (that one is older)
    "read_past_written": PRELUDE + r"""
double f(const double *x) {
  int d = dim, n = points;
  double *xc = malloc(sizeof(double) * d), s = 0;
  xc[d - 1] = x[2] * x[1];
  for (int p = 0; p < n; p++) {
    for (int j = 0; j < d - 1; j++) xc[j] = data[p * d + j] - x[j];
    for (int i = 0; i < d; i++) s += sin(xc[i]) * x[i];
    xc[d - 1] += 0.25 * xc[0];
  }
  free(xc);
  return s;
}
""",
    # the row is filled on every other iteration only
    "filled_on_some_iterations": PRELUDE + r"""
double f(const double *x) {
  int d = dim, n = points;
  double *xc = malloc(sizeof(double) * d), s = 0;
  for (int j = 0; j < d; j++) xc[j] = x[j];
  for (int p = 0; p < n; p++) {
    if (p % 2 == 0)
      for (int j = 0; j < d; j++) xc[j] = data[p * d + j] * x[j];
    for (int i = 0; i < d; i++) s += sin(xc[i] + p) * x[(i + 1) % 4];
  }
  free(xc);
  return s;
}
""",
    # the row is filled from a buffer the function writes afterwards
    "filled_from_written_memory": PRELUDE + r"""
double f(const double *x) {
  int d = dim, n = points;
  double *y = malloc(sizeof(double) * d), *xc = malloc(sizeof(double) * d), s = 0;
  for (int j = 0; j < d; j++) y[j] = x[j];
  for (int p = 0; p < n; p++) {
    for (int j = 0; j < d; j++) xc[j] = y[j] * data[p + j];
    for (int i = 0; i < d; i++) s += sin(xc[i]) * x[i];
    for (int j = 0; j < d; j++) y[j] = 0.5 * y[j] + 0.1 * s;
  }
  free(y); free(xc);
  return s;
}
""",
    # the reader updates the row in place
    "updated_in_place_by_reader": PRELUDE + r"""
double f(const double *x) {
  int d = dim, n = points;
  double *xc = malloc(sizeof(double) * d), s = 0;
  for (int p = 0; p < n; p++) {
    for (int j = 0; j < d; j++) xc[j] = data[p * d + j] - x[j];
    for (int i = 0; i < d; i++) { s += sin(xc[i]) * x[i]; xc[(i + 1) % d] *= 0.5 + 0.1 * s; }
  }
  free(xc);
  return s;
}
""",
    # the left neighbour of the first written element comes from before the loop
    "neighbour_before_first_written": PRELUDE + r"""
double f(const double *x) {
  int n = points, m = dim;
  double *g = malloc(sizeof(double) * n), s = 0;
  g[0] = x[0] * x[1];
  for (int r = 0; r < m; r++) {
    for (int j = 1; j < n; j++) g[j] = x[j % 4] * data[r * n + j];
    for (int i = 1; i < n; i++) s += (g[i] - g[i - 1]) * sin(g[i]);
    g[0] += 0.3 * s;
  }
  free(g);
  return s;
}
""",
}


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(SERVED) + sorted(NOT_SERVED))
def test_programs_of_the_class(name, level, tmp_path):
    flags, env = LEVELS[level]
    text = FD_HEAD + {**SERVED, **NOT_SERVED}[name] + fd_main(4)
    check_fd_rows(fd_rows(tmp_path, text, flags, env), 4)


def _rows(plan: str) -> list[list[str]]:
    return [line.split() for line in plan.splitlines() if line.startswith("  %")]


# the reads of the row in each member's reverse sweep, and the loads it still keeps per
# iteration (the triangular product `qx`, which two loops write, is not a row of this class)
READS = {"centred_quadratic_form": (2, 1), "helpers_per_pair": (2, 0), "row_with_left_neighbour": (2, 0),
         "stack_row": (1, 0)}


@pytest.mark.parametrize("name", sorted(SERVED))
def test_reads_of_the_row_are_rebuilt(name, tmp_path):
    plan = cache_plan(tmp_path, FD_HEAD + SERVED[name] + fd_main(4))
    rows = _rows(plan)
    rebuilt, kept = READS[name]
    assert len({r[1] for r in rows if "rebuilt from its store" in " ".join(r)}) == rebuilt, plan
    assert len([r for r in rows if r[2] == "load" and "kept:" in r and "static" in r]) == kept, plan


@pytest.mark.parametrize("name", sorted(NOT_SERVED))
def test_unsafe_reads_are_not_rebuilt(name, tmp_path):
    plan = cache_plan(tmp_path, FD_HEAD + NOT_SERVED[name] + fd_main(4))
    rebuilt = {r[1] for r in _rows(plan) if "rebuilt from its store" in " ".join(r)}
    # of the neighbour stencil, `g[i]` (i >= 1) was written by the loop; `g[i - 1]` is not
    assert len(rebuilt) == (1 if name == "neighbour_before_first_written" else 0), plan
