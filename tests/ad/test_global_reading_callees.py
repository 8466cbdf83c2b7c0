"""Callees that read active globals and write their result through a pointer. The class:
a function called with no active argument that computes from a global the differentiated
code set (parameters kept in globals, as callbacks without a user-data pointer need:
Brent's `local_min(a, b, eps, t, f, &x)` from Netlib-style libraries, Numerical Recipes
routines) and stores the result through an out-pointer into the caller's memory (a local,
a struct, a heap buffer), itself or through a callee of its own. Built with optimization,
the caller's out-variable had no shadow — activity gave pointer arguments shadows only at
calls with an active argument — so the gradient was 0 in reverse and forward mode,
silently; -O0 was right. Now a call of a function that reads active globals gives a shadow
to the pointers it may write through (analysis/activity.py), and a pointer that cannot have
one is refused (diagnostics.refuse_lost_call_stores).

Each program checks reverse and forward derivatives against closed forms or central
differences at -O0, -O2 and with AD before optimization.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest
from hcheck_run import ENZYME_BUILD, HCHECK, build_and_run_hcheck, checks_passed, loss_check_main

CONFIGS = [("-O0", {}), ("-O2", {}), ("-O2", {"ENZYME_BUILD_AD_BEFORE_OPT": "1"})]
CONFIG_IDS = ["O0", "O2", "ad-before-opt"]

HEAD = r"""
#include "hcheck.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
extern int enzyme_dup, enzyme_const, enzyme_out;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
"""


PROGRAMS = {
    # the reduced form: a local out-variable
    "out_local": r"""
#define N 1
#define P0 {0.7}
double g_a;
__attribute__((noinline)) void solve(double *x) { *x = 0.875 * g_a * g_a; }
double loss(const double *p) { g_a = p[0]; double xm; solve(&xm); return xm + sin(xm); }
""",
    # a struct of results, parameters in a static global array
    "out_struct": r"""
#define N 2
#define P0 {0.3, 1.7}
typedef struct { double a, b; } pair;
static double params[2];
__attribute__((noinline)) void fill(pair *r) { r->a = params[0] * params[1]; r->b = exp(params[0]) - params[1]; }
double loss(const double *p) {
  params[0] = p[0]; params[1] = p[1];
  pair r;
  fill(&r);
  return r.a * r.b + r.b;
}
""",
    # a heap buffer the caller allocates, filled in a loop
    "out_heap": r"""
#define N 3
#define P0 {0.5, -1.25, 2.0}
double coef[3];
__attribute__((noinline)) void table(double *out, int n) {
  for (int i = 0; i < n; i++) out[i] = coef[0] + coef[1] * i + coef[2] * i * i;
}
double loss(const double *p) {
  for (int k = 0; k < 3; k++) coef[k] = p[k];
  double *t = malloc(5 * sizeof(double)), s = 0;
  table(t, 5);
  for (int i = 0; i < 5; i++) s += t[i] * t[i];
  free(t);
  return s;
}
""",
    # the global is read two calls down
    "chain": r"""
#define N 1
#define P0 {1.3}
double g_k;
__attribute__((noinline)) void inner(double *x) { *x = cos(g_k) * g_k; }
__attribute__((noinline)) void outer(double *x) { inner(x); *x *= 3.0; }
double loss(const double *p) { g_k = p[0]; double x; outer(&x); return x * x; }
""",
    # Brent-style: a minimizer calls back a function whose parameters are globals, and
    # returns the argmin through a pointer (Newton steps on the derivative, fixed count)
    "minimizer": r"""
#define N 2
#define P0 {0.8, 1.6}
static double ga, gb;
static double f(double x) { return ga * x * x * x * x / 4 - gb * x; }    /* f' = ga x^3 - gb */
__attribute__((noinline)) double local_min(double x0, double (*fn)(double), double *xm) {
  double x = x0, h = 1e-4;
  for (int it = 0; it < 40; it++) {
    double d1 = (fn(x + h) - fn(x - h)) / (2 * h), d2 = (fn(x + h) - 2 * fn(x) + fn(x - h)) / (h * h);
    x -= d1 / d2;
  }
  *xm = x;
  return fn(x);
}
double loss(const double *p) { ga = p[0]; gb = p[1]; double xm; local_min(1.0, f, &xm); return xm; }
""",
}


@pytest.mark.parametrize("opt,env", CONFIGS, ids=CONFIG_IDS)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_results_written_through_pointers(tmp_path, name, opt, env):
    x = tuple(float(v) for v in re.search(r'#define P0 \{([^}]*)\}', PROGRAMS[name]).group(1).split(","))
    source = HEAD + PROGRAMS[name] + loss_check_main(x)
    assert checks_passed(build_and_run_hcheck(tmp_path / name, source, opt=opt, env_extra=env)) == 2 * len(x)


WORKSPACE = HEAD + r"""
typedef struct { double *buf; } ws;
double g_a;
__attribute__((noinline)) void solve(double *x) { *x = 0.875 * g_a; }
double loss(const double *p, const ws *w) { g_a = p[0]; solve(w->buf); return w->buf[0] * 2; }
int main(void) {
  double b[1], p[1] = {0.7}, d[1] = {0};
  ws w = {b};
  __enzyme_autodiff((void *)loss, enzyme_dup, p, d, enzyme_const, &w);
  printf("%g\n", d[0]);
  return 0;
}
"""


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_a_pointer_without_shadow_is_refused(tmp_path, opt):
    """The out-pointer is a workspace inside an enzyme_const struct: no shadow can follow
    it, so the build is refused (at -O2 it built with a gradient of 0)."""
    work = tmp_path / "w"
    os.makedirs(work)
    shutil.copy(HCHECK, work)
    (work / "prog.c").write_text(WORKSPACE)
    build = subprocess.run([ENZYME_BUILD, "cc", opt, "-I.", "prog.c", "-o", "prog", "-lm"], cwd=work,
                           capture_output=True, text=True, timeout=300)
    assert build.returncode == 1 and not (work / "prog").exists(), build.stderr
    assert "an active value is stored where enzyme-build cannot give the memory a shadow" in build.stderr
    assert "Traceback" not in build.stderr
