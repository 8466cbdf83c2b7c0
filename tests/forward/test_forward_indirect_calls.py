"""Forward mode (and vector forward mode) through indirect calls: a GSL-style integrator
differentiated directly with its gsl_function struct (the tangent parameters reached through
the shadow struct's `void *params`), a const table of callbacks indexed at run time with two
tangent lanes, and C++ virtual calls (tangents of the positions and, through a shadow object,
of an object's parameters). Checked against central differences at -O0, -O2 and with AD
before optimization; see enzyme_build/ad/indirect.py.
"""
from __future__ import annotations

import pytest
from hcheck_run import POTENTIALS_CXX, build_and_run_hcheck, checks_passed

CONFIGS = [("-O0", {}), ("-O2", {}), ("-O2", {"ENZYME_BUILD_AD_BEFORE_OPT": "1"})]
CONFIG_IDS = ["O0", "O2", "ad-before-opt"]

GSL = r"""
#include "hcheck.h"
extern int enzyme_const, enzyme_dup;
double __enzyme_fwddiff(void *, ...);
typedef struct { double k, c; } params;
typedef struct { double (*function)(double x, void *p); void *params; } gsl_function;
static double damped(double x, void *p) { params *q = p; return sin(q->k * x) * exp(-q->c * x); }
static double rational(double x, void *p) { params *q = p; return q->k / (1 + q->c * x * x); }
double simpson(const gsl_function *F, double a, double b, int n) {
  double h = (b - a) / n, s = F->function(a, F->params) + F->function(b, F->params);
  for (int i = 1; i < n; i++) s += F->function(a + i * h, F->params) * (i % 2 ? 4 : 2);
  return s * h / 3;
}
int main(int argc, char **argv) {
  (void)argv;
  for (int which = argc - 1; which < argc + 1; which++) {
    double (*f)(double, void *) = which ? rational : damped;
    for (int k = 0; k < 2; k++) {
      params p = {1.3, 0.7}, dp = {k == 0, k == 1}, pp = p, pm = p;
      ((double *)&pp)[k] += 1e-6;
      ((double *)&pm)[k] -= 1e-6;
      gsl_function F = {f, &p}, dF = {f, &dp}, Fp = {f, &pp}, Fm = {f, &pm};
      double got = __enzyme_fwddiff((void *)simpson, enzyme_dup, &F, &dF, enzyme_const, 0.0,
                                    enzyme_const, 2.0, enzyme_const, 64);
      hc_near("simpson", got, (simpson(&Fp, 0, 2, 64) - simpson(&Fm, 0, 2, 64)) / 2e-6, 1e-6);
    }
    /* and with respect to the upper limit */
    params p = {1.3, 0.7}, zero = {0, 0};
    gsl_function F = {f, &p}, dF = {f, &zero};
    double got = __enzyme_fwddiff((void *)simpson, enzyme_dup, &F, &dF, enzyme_const, 0.0, 2.0, 1.0,
                                  enzyme_const, 64);
    hc_near("d/db", got, (simpson(&F, 0, 2 + 1e-6, 64) - simpson(&F, 0, 2 - 1e-6, 64)) / 2e-6, 1e-6);
  }
  return hc_done();
}
"""

TABLE = r"""
#include "hcheck.h"
#include <string.h>
extern int enzyme_const, enzyme_dup, enzyme_width;
double __enzyme_fwddiff(void *, ...);
typedef struct { double d[2]; } vec2;
vec2 __enzyme_fwddiff2(void *, ...);
typedef double (*unary)(double);
static double sq(double x) { return x * x; }
static double cube(double x) { return x * x * x; }
static const unary table[4] = {sq, sin, cube, exp};
double apply(const double *x, int n, int shift) {
  double s = 0;
  for (int i = 0; i < n; i++) s += table[(i + shift) % 4](x[i]) * x[(i + 1) % n];
  return s;
}
int main(int argc, char **argv) {
  (void)argv;
  double x[4] = {0.5, -1.5, 2.0, 0.25};
  double e[2][4] = {{1, 0, 0.5, 0}, {0, 1, 0, -2}};
  for (int shift = argc - 1; shift < argc + 3; shift++) {
    vec2 t = __enzyme_fwddiff2((void *)apply, enzyme_width, 2, enzyme_dup, x, e[0], e[1], enzyme_const, 4,
                               enzyme_const, shift);
    for (int l = 0; l < 2; l++) {
      double xp[4], xm[4];
      for (int i = 0; i < 4; i++) { xp[i] = x[i] + 1e-6 * e[l][i]; xm[i] = x[i] - 1e-6 * e[l][i]; }
      double fd = (apply(xp, 4, shift) - apply(xm, 4, shift)) / 2e-6;
      hc_near("lane", t.d[l], fd, 1e-6);
      hc_near("width 1", __enzyme_fwddiff((void *)apply, enzyme_dup, x, e[l], enzyme_const, 4,
                                          enzyme_const, shift), fd, 1e-6);
    }
  }
  return hc_done();
}
"""

VIRTUAL = POTENTIALS_CXX + r"""
double one(const Potential *p, double r) { return p->eval(r) * r; }
int main(int argc, char **) {
  Harmonic h(2.0); Morse m(1.5);
  Potential *p[3] = {&h, &m, &h};
  if (argc > 1) p[0] = &m;
  double r[3] = {0.5, 1.0, -0.3}, dr[3] = {1.0, -0.5, 2.0}, rp[3], rm[3];
  for (int i = 0; i < 3; i++) { rp[i] = r[i] + 1e-6 * dr[i]; rm[i] = r[i] - 1e-6 * dr[i]; }
  double got = __enzyme_fwddiff((void *)energy, enzyme_const, p, enzyme_dup, r, dr, enzyme_const, 3);
  hc_near("energy", got, (energy(p, rp, 3) - energy(p, rm, 3)) / 2e-6, 1e-6);
  // tangent of one(&m, r) along the Morse parameter, the shadow object's vtable set Enzyme's way
  Morse dm(1.0), mp(1.5 + 1e-6), mm(1.5 - 1e-6);
  *(void **)&dm = __enzyme_virtualreverse(*(void **)&dm);
  got = __enzyme_fwddiff((void *)one, enzyme_dup, &m, &dm, enzyme_const, 0.8);
  hc_near("d/da", got, (one(&mp, 0.8) - one(&mm, 0.8)) / 2e-6, 1e-6);
  return hc_done();
}
"""


@pytest.mark.parametrize("opt,env", CONFIGS, ids=CONFIG_IDS)
@pytest.mark.parametrize("name,source,cxx,checks", [("gsl", GSL, False, 6), ("table", TABLE, False, 16),
                                                    ("virtual", VIRTUAL, True, 2)], ids=["gsl", "table", "virtual"])
def test_forward_indirect_calls(tmp_path, name, source, cxx, checks, opt, env):
    run = build_and_run_hcheck(tmp_path / name, source, cxx=cxx, opt=opt, env_extra=env)
    assert checks_passed(run) == checks
