"""Reverse mode through indirect calls: callbacks in structs (GSL's gsl_function with an
active `void *params`), const tables of callbacks indexed at run time (user functions and
libm), callbacks chosen by a flag or held in a global, split mode, second derivatives, C++
virtual calls, std::function, and Enzyme's `__enzyme_virtualreverse` shadows. Each program compares the gradient with
central differences (hcheck.h) at -O0, -O2 and with AD before optimization; the derived
code dispatches on the primal function pointer (enzyme_build/ad/indirect.py).
"""
from __future__ import annotations

import pytest
from hcheck_run import POTENTIALS_CXX, build_and_run_hcheck, checks_passed

CONFIGS = [("-O0", {}), ("-O2", {}), ("-O2", {"ENZYME_BUILD_AD_BEFORE_OPT": "1"})]
CONFIG_IDS = ["O0", "O2", "ad-before-opt"]

HEAD = r"""
#include "hcheck.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
extern int enzyme_dup, enzyme_const, enzyme_out;
double __enzyme_autodiff(void *, ...);
"""

PROGRAMS = {
    # GSL-style integration: the integrand and its parameters in a struct; the gradient with
    # respect to the parameters flows through `void *params` (the shadow struct points at the
    # shadow parameters); the integrand is picked at run time among two
    "gsl_function": (r"""
typedef struct { double k, c; } params;
typedef struct { double (*function)(double x, void *p); void *params; } gsl_function;
static double damped(double x, void *p) { params *q = p; return sin(q->k * x) * exp(-q->c * x); }
static double rational(double x, void *p) { params *q = p; return q->k / (1 + q->c * x * x); }
__attribute__((noinline)) double simpson(const gsl_function *F, double a, double b, int n) {
  double h = (b - a) / n, s = F->function(a, F->params) + F->function(b, F->params);
  for (int i = 1; i < n; i++) s += F->function(a + i * h, F->params) * (i % 2 ? 4 : 2);
  return s * h / 3;
}
static int which;
double model(params *p) {
  gsl_function F = {which ? rational : damped, p};
  return simpson(&F, 0.0, 2.0, 64);
}
int main(int argc, char **argv) {
  (void)argv;
  for (which = argc - 1; which < argc + 1; which++) {
    params p = {1.3, 0.7}, gp = {0, 0}, dp = {0, 0};
    __enzyme_autodiff((void *)model, &p, &gp);
    gsl_function F = {which ? rational : damped, &p}, dF = {which ? rational : damped, &dp};
    __enzyme_autodiff((void *)simpson, enzyme_dup, &F, &dF, enzyme_const, 0.0, enzyme_const, 2.0,
                      enzyme_const, 64);
    for (int k = 0; k < 2; k++) {
      params pp = p, pm = p;
      double h = 1e-6;
      ((double *)&pp)[k] += h;
      ((double *)&pm)[k] -= h;
      double fd = (model(&pp) - model(&pm)) / (2 * h);
      hc_near("model", ((double *)&gp)[k], fd, 1e-6);
      hc_near("simpson direct", ((double *)&dp)[k], fd, 1e-6);
    }
  }
  return hc_done();
}
""", 8),
    # adaptive Simpson (recursive, data-dependent subdivision) over a gsl_function chosen at
    # run time, differentiated directly with the struct's shadow, in reverse and forward mode
    "adaptive": (r"""
double __enzyme_fwddiff(void *, ...);
typedef struct { double k, c; } params;
typedef struct { double (*function)(double x, void *p); void *params; } gsl_function;
static double damped(double x, void *p) { params *q = p; return sin(q->k * x) * exp(-q->c * x); }
static double bump(double x, void *p) { params *q = p; return exp(-q->k * (x - q->c) * (x - q->c)); }
static double simp(const gsl_function *F, double a, double b) {
  double m = 0.5 * (a + b);
  return (b - a) / 6 * (F->function(a, F->params) + 4 * F->function(m, F->params) + F->function(b, F->params));
}
static double adapt(const gsl_function *F, double a, double b, double whole, double eps, int depth) {
  double m = 0.5 * (a + b), l = simp(F, a, m), r = simp(F, m, b);
  if (depth <= 0 || fabs(l + r - whole) <= 15 * eps) return l + r + (l + r - whole) / 15;
  return adapt(F, a, m, l, eps / 2, depth - 1) + adapt(F, m, b, r, eps / 2, depth - 1);
}
double integrate(const gsl_function *F, double a, double b) { return adapt(F, a, b, simp(F, a, b), 1e-10, 30); }
int main(int argc, char **argv) {
  (void)argv;
  for (int which = argc - 1; which < argc + 1; which++) {
    double (*f)(double, void *) = which ? bump : damped;
    params p = {1.3, 0.7}, g = {0, 0};
    gsl_function F = {f, &p}, G = {f, &g};
    __enzyme_autodiff((void *)integrate, enzyme_dup, &F, &G, enzyme_const, 0.0, enzyme_const, 3.0);
    for (int k = 0; k < 2; k++) {
      params pp = p, pm = p, t = {k == 0, k == 1};
      ((double *)&pp)[k] += 1e-6; ((double *)&pm)[k] -= 1e-6;
      gsl_function Fp = {f, &pp}, Fm = {f, &pm}, T = {f, &t};
      double fd = (integrate(&Fp, 0, 3) - integrate(&Fm, 0, 3)) / 2e-6;
      hc_near("reverse", ((double *)&g)[k], fd, 1e-6);
      hc_near("forward", __enzyme_fwddiff((void *)integrate, enzyme_dup, &F, &T, enzyme_const, 0.0,
                                          enzyme_const, 3.0), fd, 1e-6);
    }
  }
  return hc_done();
}
""", 8),
    # a const table of callbacks (user functions and libm's) indexed at run time, and a
    # callback held in a global variable set by main
    "table": (r"""
typedef double (*unary)(double);
static double sq(double x) { return x * x; }
static double cube(double x) { return x * x * x; }
static const unary table[4] = {sq, sin, cube, exp};
static unary chosen;
__attribute__((noinline)) double apply(const double *x, int n, int shift) {
  double s = 0;
  for (int i = 0; i < n; i++) s += table[(i + shift) % 4](x[i]) * chosen(x[i]);
  return s;
}
static double dapply(const double *x, int i, int shift) {
  double xp[4], xm[4];
  memcpy(xp, x, sizeof xp); memcpy(xm, x, sizeof xm);
  xp[i] += 1e-6; xm[i] -= 1e-6;
  return (apply(xp, 4, shift) - apply(xm, 4, shift)) / 2e-6;
}
int main(int argc, char **argv) {
  (void)argv;
  chosen = argc > 3 ? sq : cos;
  double x[4] = {0.5, -1.5, 2.0, 0.25};
  for (int shift = 0; shift < 4; shift++) {
    double d[4] = {0};
    __enzyme_autodiff((void *)apply, enzyme_dup, x, d, enzyme_const, 4, enzyme_const, shift + argc - 1);
    for (int i = 0; i < 4; i++) hc_near("table", d[i], dapply(x, i, shift + argc - 1), 1e-6);
  }
  return hc_done();
}
""", 16),
    # a pointer loaded from memory an enzyme_const argument points to has no shadow: the
    # objects of a const array of object pointers are left alone (their "shadow" was the
    # primal object, so the adjoints of their fields went into the fields themselves)
    "const_object_array": (r"""
typedef struct { double a; } M;
__attribute__((noinline)) double ev(const M *m, double r) { return m->a * r * r; }
double energy(M *const *p, const double *r, int n) {
  double e = 0;
  for (int i = 0; i < n; i++) e += ev(p[i], r[i]);
  return e;
}
int main(void) {
  M m1 = {1.5}, m2 = {2.5};
  M *p[2] = {&m1, &m2};
  double r[2] = {0.5, 1.0}, dr[2] = {0};
  __enzyme_autodiff((void *)energy, enzyme_const, p, enzyme_dup, r, dr, enzyme_const, 2);
  hc_near("dr0", dr[0], 1.5, 1e-12);
  hc_near("dr1", dr[1], 5.0, 1e-12);
  hc_near("a1", m1.a, 1.5, 0);
  hc_near("a2", m2.a, 2.5, 0);
  return hc_done();
}
""", 4),
    # split mode: __enzyme_augmentfwd / __enzyme_reverse of a function calling a callback
    # from a struct (the callee's augmented and reverse pieces are called through the dispatch)
    "split_mode": (r"""
typedef struct { double (*f)(double); double w; } term;
static double soft(double x) { return log(1 + exp(x)); }
static double quad(double x) { return x * x; }
double loss(const term *t, const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += t[i].w * t[i].f(x[i]);
  return s;
}
typedef struct { void *tape; double primal; } aug;
aug __enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);
int main(int argc, char **argv) {
  (void)argv;
  term t[3] = {{soft, 2.0}, {argc > 1 ? soft : quad, 0.5}, {quad, 1.5}};
  double x[3] = {0.3, -1.2, 0.7}, d[3] = {0};
  aug a = __enzyme_augmentfwd((void *)loss, enzyme_const, t, enzyme_dup, x, d, enzyme_const, 3);
  hc_near("primal", a.primal, loss(t, x, 3), 1e-12);
  __enzyme_reverse((void *)loss, enzyme_const, t, enzyme_dup, x, d, enzyme_const, 3, 1.0, a.tape);
  for (int i = 0; i < 3; i++) {
    double xp[3], xm[3];
    memcpy(xp, x, sizeof xp); memcpy(xm, x, sizeof xm);
    xp[i] += 1e-6; xm[i] -= 1e-6;
    hc_near("split", d[i], (loss(t, xp, 3) - loss(t, xm, 3)) / 2e-6, 1e-6);
  }
  return hc_done();
}
""", 4),
    # forward over reverse (a second derivative) through a callback in a struct: the inner
    # pass dispatches, the outer pass differentiates the dispatch it left
    "nested": (r"""
double __enzyme_fwddiff(void *, ...);
typedef struct { double (*fn)(double); double w; } S;
static double cube(double x) { return x * x * x; }
static double wave(double x) { return sin(2 * x); }
double f(const S *s, double x) { return s->fn(x) * x * s->w; }
double grad(const S *s, double x) { return __enzyme_autodiff((void *)f, enzyme_const, s, x); }
int main(int argc, char **argv) {
  (void)argv;
  S s = {argc > 1 ? wave : cube, 1.5};
  double x = 0.7;
  double h = __enzyme_fwddiff((void *)grad, enzyme_const, &s, x, 1.0);
  hc_near("grad", grad(&s, x), 1.5 * 4 * x * x * x, 1e-12);
  hc_near("hess", h, 1.5 * 12 * x * x, 1e-9);
  return hc_done();
}
""", 2),
    # Enzyme's virtualshadow test: the shadow struct holds __enzyme_virtualreverse(square);
    # and a callback called through the struct, the shadow built the same way
    "virtualreverse": (r"""
void *__enzyme_virtualreverse(void *);
struct S { double (*fn)(double); double val; };
double square(double x) { return x * x; }
double foo(struct S *s) { return square(s->val); }
double bar(struct S *s) { return s->fn(s->val) * s->val; }
int main(void) {
  struct S s = {square, 3.0}, d_s;
  d_s.fn = (double (*)(double))__enzyme_virtualreverse((void *)square);
  d_s.val = 0.0;
  __enzyme_autodiff((void *)foo, &s, &d_s);
  hc_near("foo", d_s.val, 6.0, 1e-12);
  d_s.val = 0.0;
  __enzyme_autodiff((void *)bar, &s, &d_s);
  hc_near("bar", d_s.val, 27.0, 1e-12);
  return hc_done();
}
""", 2),
}

CXX_PROGRAMS = {
    # a class hierarchy with virtual methods: objects chosen at run time, an override that
    # calls its base's method, derivatives with respect to the positions and (through a
    # shadow object whose vtable Enzyme's way sets: __enzyme_virtualreverse) the parameters
    "virtual_hierarchy": (POTENTIALS_CXX + r"""
struct Shifted : Harmonic {
  double s; Shifted(double k, double s) : Harmonic(k), s(s) {}
  double eval(double r) const override { return Harmonic::eval(r - s) + std::sin(s * r); } };
double one(const Potential *p, double r) { return p->eval(r) * r; }
int main(int argc, char **) {
  Harmonic h(2.0); Morse m(1.5); Shifted s(3.0, 0.4);
  Potential *all[3] = {&h, &m, &s}, *p[4];
  for (int i = 0; i < 4; i++) p[i] = all[(i + argc) % 3];
  double r[4] = {0.5, 1.0, -0.3, 0.8};
  double dr[4] = {0};
  __enzyme_autodiff((void *)energy, enzyme_const, p, enzyme_dup, r, dr, enzyme_const, 4);
  for (int i = 0; i < 4; i++) {
    double rp[4], rm[4];
    std::memcpy(rp, r, sizeof rp); std::memcpy(rm, r, sizeof rm);
    rp[i] += 1e-6; rm[i] -= 1e-6;
    hc_near("dr", dr[i], (energy(p, rp, 4) - energy(p, rm, 4)) / 2e-6, 1e-6);
  }
  // d/dk of one(&s, r) through a shadow object: same vtable, zero parameters
  Shifted ds(0.0, 0.0);
  *(void **)&ds = __enzyme_virtualreverse(*(void **)&ds);
  double got = __enzyme_autodiff((void *)one, enzyme_dup, &s, &ds, 1.1);
  Shifted sp(3.0 + 1e-6, 0.4), sm(3.0 - 1e-6, 0.4), tp(3.0, 0.4 + 1e-6), tm(3.0, 0.4 - 1e-6);
  hc_near("dk", ds.k, (one(&sp, 1.1) - one(&sm, 1.1)) / 2e-6, 1e-6);
  hc_near("ds", ds.s, (one(&tp, 1.1) - one(&tm, 1.1)) / 2e-6, 1e-6);
  hc_near("dr", got, (one(&s, 1.1 + 1e-6) - one(&s, 1.1 - 1e-6)) / 2e-6, 1e-6);
  return hc_done();
}
""", 7),
    # std::function holding a lambda, called in a loop (its invoker is a pointer in the object)
    "std_function": (r"""
#include "hcheck.h"
#include <cmath>
#include <functional>
extern "C" { extern int enzyme_dup, enzyme_const; double __enzyme_autodiff(void *, ...); }
double sum(const std::function<double(double)> &g, const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += g(x[i]);
  return s;
}
double run(const double *x, int n) {
  std::function<double(double)> g = [](double a) { return std::sin(a) * a; };
  return sum(g, x, n);
}
int main() {
  double x[3] = {0.5, 1.0, -0.3}, dx[3] = {0};
  __enzyme_autodiff((void *)run, enzyme_dup, x, dx, enzyme_const, 3);
  for (int i = 0; i < 3; i++) hc_near("std::function", dx[i], std::cos(x[i]) * x[i] + std::sin(x[i]), 1e-12);
  return hc_done();
}
""", 3),
}


@pytest.mark.parametrize("opt,env", CONFIGS, ids=CONFIG_IDS)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_c_callbacks(tmp_path, name, opt, env):
    source, checks = PROGRAMS[name]
    assert checks_passed(build_and_run_hcheck(tmp_path / name, HEAD + source, opt=opt, env_extra=env)) == checks


@pytest.mark.parametrize("opt,env", CONFIGS, ids=CONFIG_IDS)
@pytest.mark.parametrize("name", sorted(CXX_PROGRAMS))
def test_cxx_virtual_calls(tmp_path, name, opt, env):
    source, checks = CXX_PROGRAMS[name]
    assert checks_passed(build_and_run_hcheck(tmp_path / name, source, cxx=True, opt=opt, env_extra=env)) == checks


UNKNOWN_CALLEE = HEAD + r"""
#include <dlfcn.h>
typedef double (*unary)(double);
static double sq(double x) { return x * x; }
__attribute__((noinline)) double apply(unary f, double x) { return f(x); }
double twice(unary *f, double x) { return (*f)(x) + apply(sq, x); }
int main(int argc, char **argv) {
  (void)argv;
  unary f = argc > 1 ? sq : (unary)dlsym(RTLD_DEFAULT, "cbrt");   /* not a function of the program */
  hc_near("primal", twice(&f, 8.0), 2.0 + 64.0, 1e-12);
  __enzyme_autodiff((void *)twice, enzyme_const, &f, 8.0);
  return hc_done();
}
"""


def test_pointer_to_a_function_outside_the_program_stops_derived_code(tmp_path):
    """A function pointer none of the program's functions (from dlsym): the program itself
    still calls it, derived code stops with a message instead of a wrong derivative."""
    run = build_and_run_hcheck(tmp_path / "unknown", UNKNOWN_CALLEE, check=False)
    assert run.returncode != 0 and "MISMATCH" not in run.stderr, run.stdout + run.stderr
    assert "derived code called a function pointer that is none of the program's functions" in run.stderr


LIBRARY_OBJECTS = r"""
#include "hcheck.h"
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
extern "C" double __enzyme_autodiff(void *, ...);
extern "C" double __enzyme_fwddiff(void *, ...);
typedef size_t (*length_fn)(const char *);
length_fn ext_strlen;
double filebuf_lifetime(double v) {            /* delete through a libstdc++ vtable */
  std::filebuf *b = new std::filebuf();
  delete b;
  return v * v;
}
double stream_lifetime(double v) {             /* a stream made and destroyed on the heap */
  std::ostringstream *s = new std::ostringstream();
  *s << "x";
  double n = (double)s->str().size();
  delete s;
  return n * v * v * v;
}
double library_pointer(double v) {             /* a libc function through a pointer */
  char text[8] = "abcd";
  return (double)ext_strlen(text) * v;
}
int main() {
  ext_strlen = (length_fn)dlsym(RTLD_DEFAULT, "strlen");
  double x = 2.1;
  hc_near("filebuf reverse", __enzyme_autodiff((void *)filebuf_lifetime, x), 2 * x, 1e-12);
  hc_near("filebuf forward", __enzyme_fwddiff((void *)filebuf_lifetime, x, 1.0), 2 * x, 1e-12);
  hc_near("stream reverse", __enzyme_autodiff((void *)stream_lifetime, x), 3 * x * x, 1e-12);
  hc_near("strlen reverse", __enzyme_autodiff((void *)library_pointer, x), 4, 1e-12);
  hc_near("strlen forward", __enzyme_fwddiff((void *)library_pointer, x, 1.0), 4, 1e-12);
  return hc_done();
}
"""


@pytest.mark.parametrize("opt,env", CONFIGS, ids=CONFIG_IDS)
def test_calls_into_libraries_with_arguments_without_derivatives(tmp_path, opt, env):
    """The class: an indirect call whose target is outside the program (a libstdc++ vtable, a
    libc function from dlsym) and whose arguments carry no derivative. Derived code calls it
    as the program does (it used to stop, as for the call with an active argument above).
    Members: delete of a std::filebuf (virtual destructor; fbuff.cpp of Enzyme's tests), a
    std::ostringstream made and destroyed, strlen through a pointer, reverse and forward."""
    assert checks_passed(build_and_run_hcheck(tmp_path / "lib", LIBRARY_OBJECTS, cxx=True, opt=opt,
                                              env_extra=env)) == 5


@pytest.mark.parametrize("name", ["table", "gsl_function"])
def test_fast_math_calls(tmp_path, name):
    """-ffast-math puts flags and `nofpclass(...)` on the calls, before the function pointer."""
    source, checks = PROGRAMS[name]
    assert checks_passed(build_and_run_hcheck(tmp_path / name, HEAD + source, flags=("-ffast-math",))) == checks
