"""Indirect calls that are invokes and carry metadata besides `!dbg`.

The class: C++ code calling through a pointer (std::function, a virtual method, a function
pointer) while an object with a destructor is alive, so that the call is an `invoke`, after
inlining has given it `!noalias`/`!alias.scope` (a callee returning its value through
`sret`, inlined into its caller) or other attachments. The engine turns each such call into
a dispatch on the pointer (ad/indirect.py), whose invokes must keep their destinations
before the attachments: `invoke … to label %a unwind label %b, !noalias !21`. Written the
other way round the AD output did not parse (an internal error). Each program's gradient is
compared with forward mode and central differences at -O0, -O2 and with AD before
optimization.
"""
from __future__ import annotations

import pytest
from ad_helpers import CXX_FD_HEAD, CXX_FD_MAIN, LEVELS, check_fd_rows, fd_rows

PROGRAMS = {
    # an explicit Runge-Kutta stepper over a std::function right-hand side returning a
    # std::vector by value (sret): the inlined call carries !noalias
    "rk4_std_function": r"""
#include <functional>
#include <vector>
using State = std::vector<double>;
static State rk4(const std::function<State(const State &)> &rhs, State y, double h, int steps) {
  for (int s = 0; s < steps; s++) {
    State k1 = rhs(y), t(y.size());
    for (size_t i = 0; i < y.size(); i++) t[i] = y[i] + 0.5 * h * k1[i];
    State k2 = rhs(t);
    for (size_t i = 0; i < y.size(); i++) t[i] = y[i] + 0.5 * h * k2[i];
    State k3 = rhs(t);
    for (size_t i = 0; i < y.size(); i++) t[i] = y[i] + h * k3[i];
    State k4 = rhs(t);
    for (size_t i = 0; i < y.size(); i++) y[i] += h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
  }
  return y;
}
double f(const double *x) {
  double a = x[0], b = 0.5 + 0.1 * x[1];
  auto rhs = [a, b](const State &y) { return State{a * y[0] - b * y[0] * y[1], -y[1] + b * y[0] * y[1]}; };
  State y = rk4(rhs, {1.0, 1.0 + 0.2 * x[2]}, 0.01, 40);
  return y[0] + y[1] * x[3];
}
""",
    # virtual methods returning a std::vector by value, called while other vectors live
    "virtual_sret_in_scope": r"""
#include <memory>
#include <vector>
struct Map { virtual ~Map() {} virtual std::vector<double> apply(const std::vector<double> &v) const = 0; };
struct Scale : Map { double s; explicit Scale(double s) : s(s) {}
  std::vector<double> apply(const std::vector<double> &v) const override { std::vector<double> o(v); for (double &a : o) a *= s; return o; } };
struct Square : Map { std::vector<double> apply(const std::vector<double> &v) const override {
  std::vector<double> o(v.size()); for (size_t i = 0; i < v.size(); i++) o[i] = v[i] * v[i] + 0.1 * v[(i + 1) % v.size()]; return o; } };
double f(const double *x) {
  std::vector<std::unique_ptr<Map>> maps;
  maps.push_back(std::make_unique<Scale>(1.5));
  maps.push_back(std::make_unique<Square>());
  maps.push_back(std::make_unique<Scale>(-0.7));
  std::vector<double> v(x, x + 4);
  for (int round = 0; round < 2; round++)
    for (auto &m : maps) v = m->apply(v);
  double s = 0;
  for (double a : v) s += a;
  return s;
}
""",
    # a table of function pointers returning a struct through sret, each call inside a scope
    # that owns a std::vector
    "pointer_table_sret": r"""
#include <vector>
struct pair2 { double a, b; };
static pair2 rot(pair2 p, double t) { return {p.a * std::cos(t) - p.b * std::sin(t), p.a * std::sin(t) + p.b * std::cos(t)}; }
static pair2 shear(pair2 p, double t) { return {p.a + t * p.b, p.b}; }
static pair2 squash(pair2 p, double t) { return {p.a * std::exp(-t * p.a * p.a), p.b / (1 + t * t)}; }
typedef pair2 (*map_fn)(pair2, double);
static map_fn table[] = {rot, shear, squash};
__attribute__((noinline)) static pair2 chain(pair2 p, const double *t, int n) {
  for (int i = 0; i < n; i++) {
    std::vector<double> trace(2);
    trace[0] = p.a;
    p = table[i % 3](p, t[i % 4]);
    trace[1] = p.a;
    p.b += 0.01 * (trace[1] - trace[0]);
  }
  return p;
}
double f(const double *x) { pair2 p = chain({x[0], x[1]}, x, 7); return p.a * p.a + p.b; }
""",
}


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_invoked_indirect_calls(tmp_path, name, level):
    flags, env = LEVELS[level]
    rows = fd_rows(tmp_path, CXX_FD_HEAD + PROGRAMS[name] + CXX_FD_MAIN, flags, env, cxx=True)
    check_fd_rows(rows, 4, agree=1e-9, fd_tol=1e-5)
