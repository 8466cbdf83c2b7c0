"""Values computed but not chosen: a guard around an expression that is singular where the
guard is false (`k > 0 ? y / k : ...` at k = 0, `ok ? log(x) : ...` at x = 0, a NaN skipped,
`fmax(-2, log(x * x))` at x = 0). Once the optimizer if-converts the guard, the expression is
computed anyway; the reverse sweep gives the operand the select did not choose a zero adjoint,
and the expression's rule multiplied that zero by an infinite or NaN partial: the gradient was
NaN (conformance failure rev-08). Before analysis/speculation.py 9 of these 21 builds gave a
NaN: quotient_by_count and nan_skipped at -O0 and -O2, floored_log at every level (in forward
mode: fmax's tangent was 1 * t + 0 * NaN), reciprocal_chain and merged_by_phi with AD before
optimization (a quotient computed before the guard, used only under it or merged by a phi). Those partials now get a strong
zero (0 stays 0), and min/max's tangent is the chosen operand's. Each program is checked in reverse and
forward mode against central differences at -O0, -O2 and with AD before optimization, at an
input where the guard is false by a margin (the function is smooth there)."""
from __future__ import annotations

import pytest
from ad_helpers import FD_HEAD, LEVELS, check_fd_rows, fd_main, fd_rows

X = (0.5, 0.0, 1.5, -1.0)     # x[1] = 0 and x[3] < 0 make the unchosen values singular

PROGRAMS = {
    # a quotient by an integer count that is 0 (y / 0 = inf, partial 1 / 0 = inf)
    "quotient_by_count": r"""
double f(const double *x) {
  double s = 0;
  for (int i = 0; i < 4; i++) {
    int k = (int)(x[i] * x[i] * 0.1);
    s += k > 0 ? x[(i + 1) % 4] / k : x[(i + 1) % 4] * x[i] * 0.5;
  }
  return s;
}
""",
    # a logarithm guarded by a threshold, times another input (both operands' partials)
    "guarded_log": r"""
double f(const double *x) {
  double s = 0;
  for (int i = 0; i < 4; i++)
    s += x[i] > 0.1 ? log(x[i]) * x[(i + 1) % 4] : 0.25 * x[(i + 2) % 4] * x[(i + 2) % 4];
  return s;
}
""",
    # the NaN of a logarithm of a negative value skipped (conformance rev-08)
    "nan_skipped": r"""
double f(const double *x) {
  double s = 0;
  for (int i = 0; i < 4; i++) {
    double v = log(x[i] + 0.25);
    if (isnan(v)) continue;
    s += v * v * x[(i + 1) % 4];
  }
  return s;
}
""",
    # an odd square root: sqrt of a negative value is NaN on the side not taken
    "signed_sqrt": r"""
double f(const double *x) {
  double s = 0;
  for (int i = 0; i < 4; i++) {
    double u = x[i] + 0.5;
    s += (u >= 0 ? sqrt(u) : -3.0 * sqrt(-u)) * x[(i + 2) % 4];
  }
  return s;
}
""",
    # a floor on a logarithm: fmax leaves log(0) = -inf unchosen
    "floored_log": r"""
double f(const double *x) {
  double s = 0;
  for (int i = 0; i < 4; i++) s += fmax(-2.0, log(x[i] * x[i])) * x[(i + 1) % 4];
  return s;
}
""",
    # a reciprocal used two levels down the side not taken (1 / 0 = inf, then inf * inf)
    "reciprocal_chain": r"""
double f(const double *x) {
  double s = 0;
  for (int i = 0; i < 4; i++) {
    double t = 1.0 / x[i];
    s += x[i] > 0.1 ? t * t * x[(i + 2) % 4] : x[(i + 2) % 4] * 3.0;
  }
  return s;
}
""",
    # the quotient taken or not by branches that a phi merges (if-converted after optimization;
    # a phi when AD runs before it)
    "merged_by_phi": r"""
double f(const double *x) {
  double s = 0;
  for (int i = 0; i < 4; i++) {
    double t = x[(i + 2) % 4] / x[i];
    double u;
    if (x[i] > 0.1) u = t; else u = x[(i + 3) % 4];
    s += u * x[(i + 1) % 4];
  }
  return s;
}
""",
}


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_guarded_singularities(tmp_path, name, level):
    flags, env = LEVELS[level]
    check_fd_rows(fd_rows(tmp_path, FD_HEAD + PROGRAMS[name] + fd_main(4, X), flags, env), 4)
