"""Derivatives of functions the user marked `noinline` stay out of line (engine.py:
derived_attributes). The class: programs of many noinline functions called once each (a
chain of steps, a solver's stages), where the inliner would fold every single-caller derived
function into the top-level gradient. Members: a chain of noinline steps with loops and
branches, reverse and forward, split pieces and combined gradients, checked against central
differences; after the post-AD pipeline the steps' derivatives are still separate functions."""
from __future__ import annotations

import re

import pytest
from hcheck_run import build_and_run_hcheck, checks_passed

STEPS = 12


def _source() -> str:
    steps = "".join(f"""
__attribute__((noinline)) double step{k}(const double *x, double s, int n) {{
  for (int i = 0; i < n; i++) s = s * {1 + k / 16} + sin(x[i] * s) * {0.25 + k / 40};
  if (s > {k / 3}) s = log(1 + s * s); else s = s * x[{k % 4}] + {k / 7};
  return s;
}}""" for k in range(STEPS))
    chain = "".join(f"  s = step{k}(x, s, n);\n" for k in range(STEPS))
    return f"""#include "hcheck.h"
#include <enzyme/enzyme.h>
{steps}
double run(const double *x, int n) {{
  double s = x[0];
{chain}  return s;
}}
int main(void) {{
  double x[4] = {{0.3, -0.2, 0.5, 0.1}}, dx[4] = {{0}};
  __enzyme_autodiff((void *)run, enzyme_dup, x, dx, enzyme_const, 4);
  for (int i = 0; i < 4; i++) {{
    double keep = x[i], h = hc_h(keep);
    x[i] = keep + h; double up = run(x, 4);
    x[i] = keep - h; double dn = run(x, 4);
    x[i] = keep;
    hc_near("reverse", dx[i], (up - dn) / (2 * h), 1e-6);
    double t[4] = {{0}};
    t[i] = 1;
    hc_near("forward", __enzyme_fwddiff((void *)run, enzyme_dup, x, t, enzyme_const, 4), (up - dn) / (2 * h), 1e-6);
  }}
  return hc_done();
}}
"""


@pytest.mark.parametrize("opt", ["-O2", "-O3"])
def test_noinline_steps_keep_their_derivatives_out_of_line(tmp_path, opt):
    run = build_and_run_hcheck(tmp_path / "steps", _source(), opt=opt,
                               env_extra={"ENZYME_BUILD_KEEP": str(tmp_path / "keep")})
    assert checks_passed(run) == 8
    final = (tmp_path / "keep" / "prog.post-ad.ll").read_text()
    defined = re.findall(r"^define [^\n]*@(\w+)\(", final, re.M)
    derived = [n for n in defined if re.fullmatch(r"(augmented|reverse|fwddiffe|diffe)_?step\d+\w*", n)]
    assert len(derived) >= STEPS, defined
