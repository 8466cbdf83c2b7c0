"""Copies of active arrays whose elements are read only through the copy.

The class: `std::vector<double> u(x, x + n); std::vector<double> e = u;` and the elements
read through `e` alone (a helper taking it by reference, an expression-template proxy, a
copy passed by value); in C, a malloc'd copy of the input copied again before it is read.
After optimization each copy is a memcpy of run-time length between blocks nothing else
accesses. When the function is only called through the AD entry points (as from a language
binding; a direct call lets the analysis type its parameter from the caller's array), the
memcpy from the input was refused at -O0 and -O2 ("cannot differentiate a memcpy of data of
unknown type"): its type comes from the accesses of the memory it reaches through the other
copies, which `types._kinds_in` now follows. Checked in reverse and forward mode against
central differences (of `f_ref`, the same body under another name) at -O0 and -O2; with AD
before optimization the copies stay in libstdc++ helpers of their own, where a refusal naming
the copy is allowed.
"""
from __future__ import annotations

import pytest

from ad_helpers import CXX_FD_HEAD, CXX_FD_MAIN, FD_HEAD, LEVELS, check_fd_rows, fd_main, fd_rows, check_gradients

# (helpers, the definition of f)
CXX_PROGRAMS = {
    "copy_constructed": (r"""
#include <vector>
static volatile int N = 4;
static double sumsq(const std::vector<double> &v) {
  double s = 0;
  for (size_t i = 0; i < v.size(); i++) s += v[i] * v[i] * (i + 1);
  return s;
}
""", r"""
double f(const double *x) {
  std::vector<double> u(x, x + N);
  std::vector<double> e = u;
  return sumsq(e) + std::sin(e[2]);
}
"""),
    "assigned": (r"""
#include <vector>
static volatile int N = 4;
static double weighted(const std::vector<double> &v) {
  double s = 0;
  for (size_t i = 0; i < v.size(); i++) s += std::exp(-0.1 * i) * v[i] * v[(i + 1) % v.size()];
  return s;
}
""", r"""
double f(const double *x) {
  std::vector<double> u(x, x + N), e;
  e = u;
  return weighted(e);
}
"""),
    "by_value": (r"""
#include <vector>
static volatile int N = 4;
__attribute__((noinline)) static double energy(std::vector<double> v) {
  double s = 0;
  for (size_t i = 0; i < v.size(); i++) { v[i] = std::tanh(v[i]); s += v[i] * v[i]; }
  return s;
}
""", r"""
double f(const double *x) {
  std::vector<double> u(x, x + N);
  return energy(u) + energy(u) * u[1];
}
"""),
    "expression_template": (r"""
#include <cstddef>
#include <vector>
static volatile int N = 4;
template <class E> struct Expr {
  const E &self() const { return static_cast<const E &>(*this); }
  double operator[](size_t i) const { return self()[i]; }
  size_t size() const { return self().size(); }
};
class DVec : public Expr<DVec> {
  std::vector<double> d_;
 public:
  DVec(const double *p, size_t n) : d_(p, p + n) {}
  double operator[](size_t i) const { return d_[i]; }
  size_t size() const { return d_.size(); }
};
template <class A, class B> struct Mul : Expr<Mul<A, B>> {
  const A &a; const B &b;
  Mul(const A &a_, const B &b_) : a(a_), b(b_) {}
  double operator[](size_t i) const { return a[i] * b[i]; }
  size_t size() const { return a.size(); }
};
template <class A, class B> Mul<A, B> operator*(const Expr<A> &a, const Expr<B> &b) { return {a.self(), b.self()}; }
template <class A> double sum(const Expr<A> &a) { double s = 0; for (size_t i = 0; i < a.size(); i++) s += a[i]; return s; }
""", r"""
double f(const double *x) {
  DVec u(x, N);
  DVec e = u;
  return 0.5 * sum(e * e) + e[3] * e[0];
}
"""),
}

C_PROGRAMS = {
    "copied_twice": (r"""
static volatile int N = 4;
""", r"""
double f(const double *x) {
  int n = N;
  double *a = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double));
  memcpy(a, x, n * sizeof(double));
  memcpy(b, a, n * sizeof(double));
  double s = 0;
  for (int i = 0; i < n; i++) s += b[i] * b[(i + 1) % n] + cos(b[i]);
  free(a);
  free(b);
  return s;
}
"""),
}


def program(head: str, parts: tuple[str, str], main: str) -> str:
    """The helpers, f, its copy f_ref, and a main whose central differences evaluate f_ref
    (f itself is only called through __enzyme_autodiff and __enzyme_fwddiff)."""
    helpers, f = parts
    return head + helpers + f + f.replace("double f(", "double f_ref(") + main.replace("f(xp) - f(xm)", "f_ref(xp) - f_ref(xm)")


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(CXX_PROGRAMS))
def test_copied_vectors(name, level, tmp_path):
    flags, env = LEVELS[level]
    text = program(CXX_FD_HEAD, CXX_PROGRAMS[name], CXX_FD_MAIN)
    check_gradients(tmp_path, text, flags, env, cxx=True,
                    may_refuse="memcpy of data of unknown type" if level == "adbefore" else None)


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(C_PROGRAMS))
def test_copied_arrays(name, level, tmp_path):
    flags, env = LEVELS[level]
    check_fd_rows(fd_rows(tmp_path, program(FD_HEAD, C_PROGRAMS[name], fd_main()), flags, env), 4)
