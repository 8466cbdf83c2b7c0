"""Pointers to objects without derivatives of their own, stored into shadowed memory as
integers.

The class: a `std::vector<std::unique_ptr<Base>>` relocates its elements through `i64`
(`ptrtoint` and an integer store), C code keeps handles in `uintptr_t` fields. When the
object pointed to holds only constants (a `Scale` with a fixed factor, a parameter block
filled with literals), nothing active is ever stored into it, and activity analysis gave it
no shadow; the integer store then wrote nothing into the shadow memory, whose slot stayed
null. A derived method called on the object later (a virtual call on the element) took
that null as the shadow of `this` and accumulated into it: a segmentation fault, or
adjoints lost. A pointer stored as an integer now counts as a stored pointer, so the object
gets a shadow exactly as with `store ptr` (analysis/activity.py). Each program's gradient is
compared with forward mode and central differences at -O0, -O2 and with AD before
optimization.
"""
from __future__ import annotations

import pytest
from ad_helpers import CXX_FD_HEAD, CXX_FD_MAIN, LEVELS, check_fd_rows, check_program_gradient, fd_rows

CXX_PROGRAMS = {
    # objects with constant fields and without, owned by unique_ptrs in a vector that grows
    # (relocation moves the pointers as integers), called through virtual methods
    "unique_ptr_constant_objects": r"""
#include <memory>
#include <vector>
struct Op { virtual ~Op() {} virtual double apply(double v) const = 0; };
struct Scale : Op { double s; explicit Scale(double s) : s(s) {} double apply(double v) const override { return s * v; } };
struct Shift : Op { double t; explicit Shift(double t) : t(t) {} double apply(double v) const override { return v + t; } };
struct Square : Op { double apply(double v) const override { return v * v; } };
double f(const double *x) {
  std::vector<std::unique_ptr<Op>> ops;
  ops.push_back(std::make_unique<Scale>(1.5));
  ops.push_back(std::make_unique<Square>());
  ops.push_back(std::make_unique<Shift>(-0.25));
  ops.push_back(std::make_unique<Scale>(0.7));
  double s = 0;
  for (int i = 0; i < 4; i++) {
    double v = x[i];
    for (int round = 0; round < 2; round++)
      for (auto &op : ops) v = op->apply(v);
    s += v;
  }
  return s;
}
""",
    # layers holding constant weight vectors, owned through unique_ptr, applied to an active
    # activation vector
    "unique_ptr_layers_constant_weights": r"""
#include <memory>
#include <vector>
struct Layer { virtual ~Layer() {} virtual void forward(std::vector<double> &a) const = 0; };
struct Dense : Layer {
  std::vector<double> w; int n;
  explicit Dense(int n) : w(n * n), n(n) { for (int i = 0; i < n * n; i++) w[i] = 0.1 * ((i * 7) % 5) - 0.2; }
  void forward(std::vector<double> &a) const override {
    std::vector<double> o(n, 0.0);
    for (int i = 0; i < n; i++) for (int j = 0; j < n; j++) o[i] += w[i * n + j] * a[j];
    for (int i = 0; i < n; i++) a[i] += o[i];
  }
};
struct Tanh : Layer { void forward(std::vector<double> &a) const override { for (double &v : a) v = std::tanh(v); } };
double f(const double *x) {
  std::vector<std::unique_ptr<Layer>> net;
  for (int k = 0; k < 3; k++) { net.push_back(std::make_unique<Dense>(4)); net.push_back(std::make_unique<Tanh>()); }
  std::vector<double> a(x, x + 4);
  for (auto &l : net) l->forward(a);
  return a[0] + 2 * a[1] - a[2] + 0.5 * a[3];
}
""",
}

C_PROGRAMS = {
    # a uintptr_t handle to a constant parameter block in each record of a malloc'd array
    "uintptr_handles": r"""
#include <stdint.h>
typedef struct { uintptr_t params; int kind; } term;
__attribute__((noinline)) static double eval(const term *t, double v) {
  const double *p = (const double *)t->params;
  return t->kind ? p[0] * v * v + p[1] : p[0] * sin(p[1] * v);
}
double f(const double *x) {
  double *a = malloc(2 * sizeof(double)), *b = malloc(2 * sizeof(double));
  a[0] = 1.5; a[1] = 0.3; b[0] = -0.5; b[1] = 2.0;
  term *ts = malloc(3 * sizeof(term));
  ts[0] = (term){(uintptr_t)a, 0}; ts[1] = (term){(uintptr_t)b, 1}; ts[2] = (term){(uintptr_t)a, 1};
  double s = 0;
  for (int i = 0; i < 4; i++) for (int k = 0; k < 3; k++) s += eval(&ts[k], x[i]) * x[(i + k) % 4];
  free(ts); free(a); free(b);
  return s;
}
""",
}


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(CXX_PROGRAMS))
def test_cxx_pointers_stored_as_integers(tmp_path, name, level):
    flags, env = LEVELS[level]
    rows = fd_rows(tmp_path, CXX_FD_HEAD + CXX_PROGRAMS[name] + CXX_FD_MAIN, flags, env, cxx=True)
    check_fd_rows(rows, 4, agree=1e-9, fd_tol=1e-5)


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(C_PROGRAMS))
def test_c_pointers_stored_as_integers(tmp_path, name, level):
    check_program_gradient(tmp_path, C_PROGRAMS[name], level)
