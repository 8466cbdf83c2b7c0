"""Derivatives at non-differentiable points follow Enzyme's conventions:
d|x| is the sign of x with -0.0 counting as negative (copysign(1, x)); the partial of sqrt
and cbrt at 0 (infinite there) is 0 in every mode, so d sqrt(x*x) at x = 0 is 0, not NaN,
and d sqrt(x) at 0 is 0, not inf."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

ENZYME_BUILD = os.path.join(os.path.dirname(sys.executable), "enzyme-build")

PROGRAM = r"""
#include <stdio.h>
#include <math.h>
double __enzyme_fwddiff(void *, ...);
double __enzyme_autodiff(void *, ...);
double fa(double x) { return fabs(x); }
double sq(double x) { return sqrt(x * x); }
double cb(double x) { return cbrt(x * x * x); }
double rt(double x) { return sqrt(x); }
float faf(float x) { return fabsf(x); }
int main(void) {
  printf("%g %g %g %g %g\n", __enzyme_fwddiff((void *)fa, -0.0, 1.0), __enzyme_fwddiff((void *)fa, 0.0, 1.0),
         __enzyme_fwddiff((void *)sq, 0.0, 1.0), __enzyme_fwddiff((void *)sq, -2.0, 1.0),
         __enzyme_fwddiff((void *)cb, 0.0, 1.0));
  printf("%g %g %g\n", __enzyme_autodiff((void *)fa, -0.0), __enzyme_autodiff((void *)fa, 3.0),
         (double)((float (*)(void *, ...))__enzyme_autodiff)((void *)faf, -0.0f));
  printf("%g %g %g %g %g\n", __enzyme_autodiff((void *)sq, 0.0), __enzyme_autodiff((void *)sq, -2.0),
         __enzyme_autodiff((void *)rt, 0.0), __enzyme_fwddiff((void *)rt, 0.0, 1.0), __enzyme_autodiff((void *)cb, 0.0));
  return 0;
}
"""


@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_conventions_at_non_differentiable_points(tmp_path, level):
    (tmp_path / "c.c").write_text(PROGRAM)
    done = subprocess.run([ENZYME_BUILD, "cc", level, "c.c", "-o", "c", "-lm"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    out = subprocess.run([str(tmp_path / "c")], capture_output=True, text=True).stdout.split("\n")
    assert out[0] == "-1 1 0 -1 0"
    assert out[1] == "-1 1 -1"
    assert out[2] == "0 -1 0 0 0"
