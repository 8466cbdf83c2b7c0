"""Characters of a constant string copied into memory beside derivative-carrying data. The
class: a status or error message written with `sprintf(buf, "literal")` or `strcpy(name,
"literal")` into a struct that also holds doubles, or whose owner is differentiated (C
libraries report errors this way: tinyspline's status messages). clang turns those calls
into a `memcpy` from the string constant, whose bytes no access in the program types: the
build was refused ("a memcpy of data of unknown type") from -O1 on. A copy out of a
constant global holding a string moves characters (analysis/types.py: _constant_text).

Reverse and forward derivatives against closed forms at -O0, -O2, -O3 and with AD before
optimization.
"""
from __future__ import annotations

import pytest
from hcheck_run import build_and_run_hcheck, checks_passed

SOURCE = r"""
#include "hcheck.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
typedef struct { int code; char message[100]; } status;
typedef struct { char name[16]; double x, v; } particle;
__attribute__((noinline)) int work(const double *x, double *out, status *st) {
  if (x[0] < -100) { st->code = 1; sprintf(st->message, "input too small"); return 1; }
  *out = x[0] * x[0] + x[1]; st->code = 0;
  sprintf(st->message, "ok");
  return 0;
}
__attribute__((noinline)) void label(particle *p, const double *x) {
  strcpy(p->name, x[0] > 0 ? "right" : "left");
  p->x = x[0]; p->v = x[1];
}
double f(double *x) {
  status st;
  double r = 0;
  if (work(x, &r, &st)) return 0;
  particle p;
  label(&p, x);
  return r * x[1] + sin(p.x) * p.v + (double)strlen(p.name);
}
int main(void) {
  double x[2] = {1.5, 2.0}, dx[2] = {0, 0}, t0[2] = {1, 0}, t1[2] = {0, 1};
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx);
  double want0 = 2 * x[0] * x[1] + cos(x[0]) * x[1], want1 = x[0] * x[0] + 2 * x[1] + sin(x[0]);
  hc_near("reverse 0", dx[0], want0, 1e-12);
  hc_near("reverse 1", dx[1], want1, 1e-12);
  hc_near("forward 0", __enzyme_fwddiff((void *)f, enzyme_dup, x, t0), want0, 1e-12);
  hc_near("forward 1", __enzyme_fwddiff((void *)f, enzyme_dup, x, t1), want1, 1e-12);
  return hc_done();
}
"""

CONFIGS = [("-O0", {}), ("-O2", {}), ("-O3", {}), ("-O2", {"ENZYME_BUILD_AD_BEFORE_OPT": "1"})]


@pytest.mark.parametrize("opt,env", CONFIGS, ids=["O0", "O2", "O3", "ad-before-opt"])
def test_string_constants_copied_beside_active_data(tmp_path, opt, env):
    assert checks_passed(build_and_run_hcheck(tmp_path / "t", SOURCE, opt=opt, env_extra=env)) == 4
