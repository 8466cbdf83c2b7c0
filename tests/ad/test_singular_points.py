"""Derivatives at points where a partial is infinite or undefined but the derivative asked for
is not: a zero seed or a zero factor must give 0, never inf * 0 = NaN.

The class: a rule's partial is built first and multiplied by the tangent (or adjoint) after.
pow(x, y) at x = 0 has log(x) = -inf in its y partial; x / y with a tiny y has a y partial
-x/y^2 that overflows. Members: reverse and forward pow at 0 (y = 1, 2, 0.5, a float
pow), forward quotients by 1e-160 and 1e-300 (a general numerator, a reciprocal 1/y, float
3e-20, two lanes of vector forward mode), each checked against its closed form, at -O0 and
-O2. And comparisons of memory inside differentiated code, which LLVM lowers to libc calls
that move no derivative (memcmp(...) == 0 becomes bcmp)."""
from __future__ import annotations

import math
import subprocess

import pytest

from ad_helpers import enzyme_build_cli

SINGULAR = r"""
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <enzyme/enzyme.h>

typedef struct { double dx, dy; } G2;
typedef struct { double d[2]; } V2;
G2 __enzyme_autodiff_2(void *, ...) __asm__("__enzyme_autodiff");
V2 __enzyme_fwddiff_lanes(void *, ...) __asm__("__enzyme_fwddiff");

double powxy(double x, double y) { return pow(x, y); }
float powxyf(float x, float y) { return powf(x, y); }
double quot(double x, double y) { return x / y; }
double recip_plus(double x, double y) { return x + 1.0 / y; }
float quotf(float x, float y) { return x / y; }

/* a weight chosen by comparing two tags, then used in the arithmetic */
struct item { char tag[8]; double w; };
double tagged(const struct item *it, int n, double x) {
  double s = 0;
  for (int i = 0; i < n; i++)
    if (memcmp(it[i].tag, "active", 6) == 0) s += it[i].w * x * x;
    else s += it[i].w;
  return s;
}

static void show(const char *what, double got) { printf("%s %.17g\n", what, got); }

int main(void) {
  G2 g;
  g = __enzyme_autodiff_2((void *)powxy, 0.0, 1.0);  show("rev_pow_0_1_dx", g.dx); show("rev_pow_0_1_dy", g.dy);
  g = __enzyme_autodiff_2((void *)powxy, 0.0, 2.0);  show("rev_pow_0_2_dx", g.dx); show("rev_pow_0_2_dy", g.dy);
  g = __enzyme_autodiff_2((void *)powxy, 2.0, 3.0);  show("rev_pow_2_3_dx", g.dx); show("rev_pow_2_3_dy", g.dy);
  show("fwd_pow_0_1_dx", __enzyme_fwddiff((void *)powxy, 0.0, 1.0, 1.0, 0.0));
  show("fwd_pow_0_1_dy", __enzyme_fwddiff((void *)powxy, 0.0, 0.0, 1.0, 1.0));
  show("fwd_pow_0_2_dx", __enzyme_fwddiff((void *)powxy, 0.0, 1.0, 2.0, 0.0));
  show("fwd_pow_3_2_dx", __enzyme_fwddiff((void *)powxy, 3.0, 1.0, 2.0, 0.0));
  float ff = ((float (*)(void *, ...))__enzyme_fwddiff)((void *)powxyf, 0.0f, 1.0f, 2.0f, 0.0f);
  show("fwd_powf_0_2_dx", ff);
  show("fwd_quot_1e-160_dx", __enzyme_fwddiff((void *)quot, 2.0, 1.0, 1e-160, 0.0));
  show("fwd_quot_1e-300_dx", __enzyme_fwddiff((void *)quot, 3.0, 1.0, 1e-300, 0.0));
  show("fwd_quot_2_4_dy", __enzyme_fwddiff((void *)quot, 2.0, 0.0, 4.0, 1.0));
  show("fwd_recip_1e-160_dx", __enzyme_fwddiff((void *)recip_plus, 2.0, 1.0, 1e-160, 0.0));
  float qf = ((float (*)(void *, ...))__enzyme_fwddiff)((void *)quotf, 2.0f, 1.0f, 3e-20f, 0.0f);
  show("fwd_quotf_3e-20_dx", qf);
  V2 v = __enzyme_fwddiff_lanes((void *)quot, enzyme_width, 2, 2.0, 1.0, 0.0, 1e-160, 0.0, 0.0);
  show("vec_quot_lane0", v.d[0]); show("vec_quot_lane1", v.d[1]);
  struct item items[3] = {{"active", 2.0}, {"passive", 5.0}, {"active", 0.5}};
  show("tagged_dx", __enzyme_autodiff((void *)tagged, enzyme_const, items, enzyme_const, 3, 1.5));
  return 0;
}
"""

EXPECTED = {
    "rev_pow_0_1_dx": 1.0, "rev_pow_0_1_dy": 0.0,
    "rev_pow_0_2_dx": 0.0, "rev_pow_0_2_dy": 0.0,
    "rev_pow_2_3_dx": 12.0, "rev_pow_2_3_dy": 8.0 * math.log(2.0),
    "fwd_pow_0_1_dx": 1.0, "fwd_pow_0_1_dy": 0.0, "fwd_pow_0_2_dx": 0.0, "fwd_pow_3_2_dx": 6.0,
    "fwd_powf_0_2_dx": 0.0,
    "fwd_quot_1e-160_dx": 1e160, "fwd_quot_1e-300_dx": 1e300, "fwd_quot_2_4_dy": -2.0 / 16.0,
    "fwd_recip_1e-160_dx": 1.0,
    "fwd_quotf_3e-20_dx": float(1.0 / 3e-20),
    "vec_quot_lane0": 1e160, "vec_quot_lane1": 0.0,
    "tagged_dx": 2 * 1.5 * (2.0 + 0.5),
}


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_derivatives_at_singular_points_are_finite(tmp_path, opt):
    src = tmp_path / "singular.c"
    src.write_text(SINGULAR)
    exe = tmp_path / "singular"
    build = subprocess.run([enzyme_build_cli(), "cc", opt, str(src), "-o", str(exe), "-lm"],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    got = dict(line.split() for line in run.stdout.splitlines())
    assert set(got) == set(EXPECTED)
    for key, want in EXPECTED.items():
        value = float(got[key])
        tol = 1e-6 if "quotf" in key or "powf" in key else 1e-12
        assert math.isfinite(value) and math.isclose(value, want, rel_tol=tol, abs_tol=tol), (key, value, want)
