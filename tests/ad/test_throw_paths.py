"""Error paths that throw, next to differentiated code.

The class: a check that throws on bad input -- `throw std::domain_error("bad argument " +
std::to_string(x))`, an exception class carrying the active residual, a throw in a function
that also holds an RAII guard, `std::vector::at` -- on a way that never runs for the inputs
differentiated. What runs there was differentiated like the rest and refused: the residual
stored into the exception object ("an active value is stored where enzyme-build cannot give
the memory a shadow"), the exception's constructor ("no body and no derivative rule"),
`std::to_string(double)` ("cannot differentiate the variadic function __to_xstring"). A block
from which no return is reachable needs no derivative: the reverse sweep runs only after a
return and a tangent leaves only through one, so only the primal runs there
(`cfg.returning_blocks`); std::to_string writes characters only (library table). Checked in
reverse and forward mode against central differences at -O0, -O2 and with AD before
optimization. With a bad input the exception leaves the gradient and forward derivative and
is caught by the caller's handler: an AD call made with `invoke` (inside a `try`) calls the
derived function with `invoke` too, unwinding to the same landing pad (it used to become a
plain call: the program terminated).
"""
from __future__ import annotations

import pytest

from ad_helpers import CXX_FD_HEAD, CXX_FD_MAIN, LEVELS, built_and_run, check_fd_rows, fd_rows

PROGRAMS = {
    "formatted_message": r"""
#include <stdexcept>
#include <string>
static double checked_log(double x) {
  if (!(x > 0)) throw std::domain_error("checked_log: bad argument " + std::to_string(x));
  return std::log(x);
}
double f(const double *x) { return checked_log(x[0] * x[0] + x[1] * x[1]) * x[2] + checked_log(2 + std::sin(x[3])); }
""",
    "residual_in_exception": r"""
#include <stdexcept>
#include <string>
struct ConvergenceError : std::runtime_error {
  double residual;
  ConvergenceError(const std::string &m, double r) : std::runtime_error(m), residual(r) {}
};
__attribute__((noinline)) static double newton_sqrt(double a) {
  double y = a > 1 ? a : 1;
  for (int it = 0; it < 60; it++) {
    double r = y * y - a;
    if (std::fabs(r) < 1e-14 * a) return y;
    if (!std::isfinite(r)) throw ConvergenceError("newton_sqrt diverged", r);
    y -= r / (2 * y);
  }
  throw ConvergenceError("newton_sqrt did not converge", y * y - a);
}
double f(const double *x) { return newton_sqrt(1 + x[0] * x[0]) * x[1] + newton_sqrt(2 + x[2] * x[3] * x[2] * x[3]); }
""",
    "guarded_scope": r"""
#include <stdexcept>
static int depth = 0;
struct DepthGuard { DepthGuard() { ++depth; } ~DepthGuard() { --depth; } };
__attribute__((noinline)) static double step(const double *x, int i) {
  DepthGuard guard;
  double v = x[i] * x[(i + 1) % 4];
  if (depth > 8 || !(v > -1e300)) throw std::runtime_error("step: recursion too deep or value out of range");
  return std::exp(-v) + v * v;
}
double f(const double *x) {
  double s = 0;
  for (int i = 0; i < 4; i++) s += step(x, i);
  return s;
}
""",
    "checked_access": r"""
#include <vector>
double f(const double *x) {
  std::vector<double> v(x, x + 4);
  double s = 0;
  for (int i = 0; i < 4; i++) s += v.at(i) * v.at((i + 1) % 4) + std::cos(v.at(i));
  return s;
}
""",
}


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_throw_paths(name, level, tmp_path):
    flags, env = LEVELS[level]
    check_fd_rows(fd_rows(tmp_path, CXX_FD_HEAD + PROGRAMS[name] + CXX_FD_MAIN, flags, env, cxx=True), 4)


BAD_INPUT = r"""
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
extern int enzyme_dup;
extern "C" void __enzyme_autodiff(void *, ...);
static double checked_log(double x) {
  if (!(x > 0)) throw std::domain_error("checked_log: bad argument " + std::to_string(x));
  return std::log(x);
}
double f(const double *x) { return checked_log(x[0]) * x[1]; }
int main() {
  double x[2] = {-2.5, 1.0}, g[2] = {0, 0};
  try {
    __enzyme_autodiff((void *)f, enzyme_dup, x, g);
  } catch (const std::domain_error &e) {
    std::printf("caught: %s\n", e.what());
    return 0;
  }
  return 1;
}
"""


def test_bad_input_still_throws(tmp_path):
    out = built_and_run(tmp_path, BAD_INPUT, cxx=True)
    assert out.returncode == 0 and "caught: checked_log: bad argument -2.500000" in out.stdout, (out.stdout, out.stderr)
