"""Constructors defined out of line, with AD before optimization. clang emits a class's
complete-object constructor (C1) and destructor (D1) as aliases of the base-object ones
(`@_ZN1PC1Ev = alias void (ptr), ptr @_ZN1PC2Ev`) when the class has no virtual bases; calls
name the alias. The optimizer resolves them, so builds after optimization were right, but
with AD before optimization the engine met a call of a function without body and refused
(box2d-lite's `Body::Body()`, tinyspline's `BSpline(tsBSpline&)`). The AD stage now makes
such calls name the function (ad/stage.py: resolve_function_aliases).

Members: a default constructor, a constructor taking the active value, an out-of-line copy
constructor and destructor, a derived class whose constructor calls its base's; reverse and
forward derivatives against closed forms at -O0 and -O2, before and after optimization.
"""
from __future__ import annotations

import pytest
from hcheck_run import build_and_run_hcheck, checks_passed

SOURCE = r"""
#include "hcheck.h"
#include <cmath>
extern "C" { extern int enzyme_dup; double __enzyme_autodiff(void *, ...); double __enzyme_fwddiff(void *, ...); }
struct P { P(); explicit P(double v); P(const P &o); ~P(); double x, v; };
P::P() { x = 0; v = 0; }
P::P(double v0) : x(0), v(v0) {}
P::P(const P &o) : x(o.x), v(2 * o.v) {}
P::~P() {}
struct Q : P { explicit Q(double v0); double w; };
Q::Q(double v0) : P(v0), w(std::sin(v0)) {}
double f(double *p) {
  P a; a.v = p[0];
  for (int i = 0; i < 3; i++) a.x += a.v * a.v;     /* 3 p^2 */
  P b(p[0]);
  P c(b);                                           /* c.v = 2p */
  Q q(p[0]);
  return a.x + c.v * b.v + q.w * q.v;               /* 3p^2 + 2p^2 + p sin p */
}
int main() {
  double p = 1.5, dp = 0, t = 1;
  __enzyme_autodiff((void *)f, enzyme_dup, &p, &dp);
  double want = 10 * p + std::sin(p) + p * std::cos(p);
  hc_near("reverse", dp, want, 1e-12);
  hc_near("forward", __enzyme_fwddiff((void *)f, enzyme_dup, &p, &t), want, 1e-12);
  return hc_done();
}
"""


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
@pytest.mark.parametrize("before", [False, True], ids=["after-opt", "ad-before-opt"])
def test_out_of_line_constructors(tmp_path, opt, before):
    env = {"ENZYME_BUILD_AD_BEFORE_OPT": "1"} if before else {}
    assert checks_passed(build_and_run_hcheck(tmp_path / "p", SOURCE, cxx=True, opt=opt, env_extra=env)) == 2
