"""Calls through function pointers that no function of the program can be the target of,
on some paths only. The class: an interpreter or a dispatcher that calls its callbacks by
type (tinyexpr's `te_eval` switches on a node's arity and calls `double (*)(double, double,
double)` for arity 3 even when no function of that type exists), an optional hook left
unset, a plugin pointer filled in from a library. No candidate means the pointer comes from
outside the program, so its derivative is unknown: derived code keeps the call behind the
marker that stops the program with a message if it gets there, and the build warns once
(enzyme_build/ad/indirect.py, `uncallable`; ad/diagnostics.py, `uncallable_pointer`).
Such a build used to be refused outright; a call that every call of its function makes
still is (tests/ad/test_errors.py, tests/forward/test_forward_errors.py).

Each program checks reverse and forward derivatives against central differences at -O0,
-O2 and with AD before optimization.
"""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from hcheck_run import ENZYME_BUILD, HCHECK, build_and_run_hcheck, checks_passed

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

# a tinyexpr-style tree: nodes call their function by arity; arities 1 and 2 have the
# program's functions and libm's, arity 3 none (no expression uses it)
INTERPRETER = HEAD + r"""
typedef struct node {
  int arity;                      /* -1 constant, -2 variable, 0..3 function */
  union { double value; const double *var; const void *fn; };
  struct node *args[3];
} node;
static double add(double a, double b) { return a + b; }
static double mul(double a, double b) { return a * b; }
static double neg(double a) { return -a; }
double eval(const node *n) {
  switch (n->arity) {
  case -1: return n->value;
  case -2: return *n->var;
  case 0: return ((double (*)(void))n->fn)();
  case 1: return ((double (*)(double))n->fn)(eval(n->args[0]));
  case 2: return ((double (*)(double, double))n->fn)(eval(n->args[0]), eval(n->args[1]));
  case 3: return ((double (*)(double, double, double))n->fn)(eval(n->args[0]), eval(n->args[1]),
                                                           eval(n->args[2]));
  }
  return NAN;
}
static node pool[64];
static int used;
static node *leaf(double v) { node *n = &pool[used++]; n->arity = -1; n->value = v; return n; }
static node *var(const double *p) { node *n = &pool[used++]; n->arity = -2; n->var = p; return n; }
static node *fn1(const void *f, node *a) { node *n = &pool[used++]; n->arity = 1; n->fn = f; n->args[0] = a; return n; }
static node *fn2(const void *f, node *a, node *b) {
  node *n = &pool[used++]; n->arity = 2; n->fn = f; n->args[0] = a; n->args[1] = b; return n;
}
/* sin(x) * y^2 + exp(-x * y) + x * 3; the shadow tree's variables are the shadow variables,
   its constants 0 */
static node *build(const double *x, const double *y, double three) {
  return fn2(add, fn2(add, fn2(mul, fn1(sin, var(x)), fn2(pow, var(y), leaf(2 * three / 3))),
                      fn1(exp, fn1(neg, fn2(mul, var(x), var(y))))),
             fn2(mul, var(x), leaf(three)));
}
static double xv, yv, dxv, dyv;
void *__enzyme_shadow_global_xv[2] = {&xv, &dxv};
void *__enzyme_shadow_global_yv[2] = {&yv, &dyv};
double at(const double *p, const node *e) { xv = p[0]; yv = p[1]; return eval(e); }
int main(void) {
  node *e = build(&xv, &yv, 3.0);
  node *de = build(&dxv, &dyv, 0.0);
  double p[2] = {0.7, 1.3}, g[2] = {0, 0};
  __enzyme_autodiff((void *)at, enzyme_dup, p, g, enzyme_dup, e, de);
  for (int i = 0; i < 2; i++) {
    double h = 1e-6, pp[2] = {p[0], p[1]}, pm[2] = {p[0], p[1]}, d[2] = {0, 0};
    pp[i] += h; pm[i] -= h; d[i] = 1;
    double fd = (at(pp, e) - at(pm, e)) / (2 * h);
    hc_near("reverse", g[i], fd, 1e-6);
    used = 0;
    e = build(&xv, &yv, 3.0);          /* the reverse sweep added adjoints into de's constants */
    de = build(&dxv, &dyv, 0.0);
    hc_near("forward", __enzyme_fwddiff((void *)at, enzyme_dup, p, d, enzyme_dup, e, de), fd, 1e-6);
  }
  return hc_done();
}
"""

# an optional hook of a type no function of the program has, left unset
UNSET_HOOK = HEAD + r"""
typedef struct {
  double k;
  double (*hook)(double, double, int);     /* e.g. a user's damping law; none here */
} model;
double energy(const double *x, const model *m, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    double y = m->k * x[i] * x[i];
    if (m->hook) y = m->hook(y, x[i], i);
    s += y + sin(x[i]);
  }
  return s;
}
int main(void) {
  model m = {1.5, NULL}, dm = {0, NULL};
  double x[3] = {0.3, -1.2, 2.0}, gx[3] = {0, 0, 0};
  __enzyme_autodiff((void *)energy, enzyme_dup, x, gx, enzyme_dup, &m, &dm, enzyme_const, 3);
  hc_near("dk", dm.k, 0.09 + 1.44 + 4.0, 1e-12);
  for (int i = 0; i < 3; i++) {
    double d[3] = {0, 0, 0};
    model tm = {0, NULL};
    d[i] = 1;
    hc_near("reverse", gx[i], 3.0 * x[i] + cos(x[i]), 1e-12);
    hc_near("forward", __enzyme_fwddiff((void *)energy, enzyme_dup, x, d, enzyme_dup, &m, &tm, enzyme_const, 3),
            3.0 * x[i] + cos(x[i]), 1e-12);
  }
  return hc_done();
}
"""

# the same hook filled in from a library at run time: derived code cannot know its
# derivative and stops there; the program itself runs as written
LIBRARY_HOOK = HEAD + r"""
#include <dlfcn.h>
typedef double (*ternary)(double, double, double);
typedef struct { double k; ternary hook; } model;
double energy(const double *x, const model *m, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    double y = m->k * x[i];
    if (m->hook) y = m->hook(y, x[i], 1.0);
    s += y;
  }
  return s;
}
int main(int argc, char **argv) {
  (void)argv;
  model m = {1.5, argc > 5 ? NULL : (ternary)dlsym(RTLD_DEFAULT, "fma")}, dm = {0, m.hook};
  double x[2] = {0.5, 2.0}, gx[2] = {0, 0};
  hc_near("primal", energy(x, &m, 2), 1.5 * 0.5 * 0.5 + 1 + 1.5 * 2 * 2 + 1, 1e-12);
  __enzyme_autodiff((void *)energy, enzyme_dup, x, gx, enzyme_dup, &m, &dm, enzyme_const, 2);
  printf("not stopped: %g %g\n", gx[0], gx[1]);
  return hc_done();
}
"""

PROGRAMS = {"interpreter": (INTERPRETER, 4), "unset_hook": (UNSET_HOOK, 7)}


@pytest.mark.parametrize("opt,env", CONFIGS, ids=CONFIG_IDS)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_calls_no_function_can_take_on_paths_not_taken(tmp_path, name, opt, env):
    source, checks = PROGRAMS[name]
    assert checks_passed(build_and_run_hcheck(tmp_path / name, source, opt=opt, env_extra=env)) == checks


@pytest.mark.parametrize("opt,env", CONFIGS, ids=CONFIG_IDS)
def test_a_library_pointer_on_such_a_path_stops_derived_code(tmp_path, opt, env):
    """fma from dlsym as the hook: the primal check passes, then derived code stops with the
    message before any gradient is printed."""
    run = build_and_run_hcheck(tmp_path / "lib", LIBRARY_HOOK, opt=opt, env_extra=env, check=False)
    assert run.returncode != 0 and "not stopped" not in run.stdout, run.stdout + run.stderr
    assert "MISMATCH" not in run.stdout + run.stderr
    assert "derived code called a function pointer that is none of the program's functions" in run.stderr


def test_the_build_warns_once_per_function(tmp_path):
    """The build says where derived code may stop: the function, the call's type, where the
    pointer comes from; once per function however many such calls it has."""
    work = tmp_path / "w"
    os.makedirs(work)
    shutil.copy(HCHECK, work)
    (work / "prog.c").write_text(INTERPRETER)
    build = subprocess.run([ENZYME_BUILD, "cc", "-O2", "-I.", "prog.c", "-o", "prog", "-lm"], cwd=work,
                           capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr
    warnings = [line for line in build.stderr.splitlines() if "warning:" in line]
    assert warnings and all("@eval calls a function pointer" in w for w in warnings), build.stderr
    assert "double (double, double, double)" in warnings[0]
    assert "loaded from memory that parameter 1 of eval points to" in warnings[0]
    assert len(warnings) <= 2    # one for the reverse, one for the forward derivative
