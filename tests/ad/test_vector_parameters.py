"""Vectors of floats passed by value to the function an AD call differentiates: a struct of two
floats (x86-64 packs it into one <2 x float> register), of three (<2 x float>, float) or four
(two <2 x float>), `float _Complex`, a GCC vector type. The function gets a twin taking each
lane as a float of its own (stage.vector_lane_entries), which the argument parser
differentiates instead (abi.lanes_twin): the caller passes the struct as it is, the gradient
comes back as the struct, the tangent of each lane is its own. Before, reverse mode took such a
parameter for a constant (every gradient 0, silently) and forward mode refused it
(conformance failure fwd-12). Each program checks reverse, forward, vector forward and split
mode against closed forms, at -O0, -O2 and with AD before optimization."""
from __future__ import annotations

import pytest
from ad_helpers import LEVELS, built_and_run

HEAD = r"""
#include <stdio.h>
#include <math.h>
#include <complex.h>
extern int enzyme_const, enzyme_width;
static int bad;
static void near(const char *what, double got, double want) {
  if (!(fabs(got - want) <= 1e-5 * (1 + fabs(want)))) { printf("MISMATCH %s: %.9g want %.9g\n", what, got, want); bad++; }
}
typedef struct { float x, y; } fvec2;
typedef struct { float x, y, z; } fvec3;
typedef struct { float x, y, z, w; } fvec4;
typedef double v2d __attribute__((vector_size(16)));
typedef struct { double d[2]; } two;
double __enzyme_fwddiff(void *, ...);
two __enzyme_fwddiff2(void *, ...) __asm__("__enzyme_fwddiff");
void *__enzyme_augmentfwd(void *, ...);
"""

PROGRAMS = {
    "pair": r"""
fvec2 __enzyme_autodiff(void *, ...);
fvec2 __enzyme_reverse(void *, ...);
double f(fvec2 v) { return sin(v.x) * v.y + 3.0f * v.y * v.y; }
int main(void) {
  fvec2 p = {0.6f, -0.8f}, e0 = {1, 0}, e1 = {0, 1};
  double wx = cos(0.6f) * -0.8f, wy = sin(0.6f) + 6.0 * -0.8f;
  fvec2 g = __enzyme_autodiff((void *)f, p);
  near("rev x", g.x, wx); near("rev y", g.y, wy);
  near("fwd x", __enzyme_fwddiff((void *)f, p, e0), wx);
  near("fwd y", __enzyme_fwddiff((void *)f, p, e1), wy);
  two t = __enzyme_fwddiff2((void *)f, enzyme_width, 2, p, e0, e1);
  near("vec x", t.d[0], wx); near("vec y", t.d[1], wy);
  void *tape = __enzyme_augmentfwd((void *)f, p);
  fvec2 s = __enzyme_reverse((void *)f, p, 2.0, tape);
  near("split x", s.x, 2 * wx); near("split y", s.y, 2 * wy);
  printf("%s\n", bad ? "FAIL" : "ok");
  return bad;
}
""",
    "pair_beside_others": r"""
double __enzyme_autodiff(void *, ...);
double f(fvec2 v, double s, fvec2 w) { return v.x * w.y * s * s + exp(v.y * w.x); }
int main(void) {
  fvec2 v = {0.6f, -0.8f}, w = {2.0f, 0.5f}, dv = {1, 1}, dw = {0, 1};
  double ds = __enzyme_autodiff((void *)f, enzyme_const, v, 2.0, enzyme_const, w);
  near("rev s", ds, 0.6f * 0.5f * 4.0);
  near("fwd v", __enzyme_fwddiff((void *)f, v, dv, 2.0, 0.0, enzyme_const, w),
       0.5f * 4.0 + 2.0f * exp(-0.8f * 2.0f));
  near("fwd w", __enzyme_fwddiff((void *)f, enzyme_const, v, 2.0, 0.0, w, dw), 0.6f * 4.0);
  printf("%s\n", bad ? "FAIL" : "ok");
  return bad;
}
""",
    "triple_and_quad": r"""
fvec3 __enzyme_autodiff3(void *, ...) __asm__("__enzyme_autodiff");
fvec4 __enzyme_autodiff4(void *, ...) __asm__("__enzyme_autodiff");
double f3(fvec3 v) { return v.x * v.y + v.z * v.z * 2.0f; }
double f4(fvec4 v) { return v.x * v.y + sqrt(v.z * v.w) * 3.0f; }
int main(void) {
  fvec3 a = {1, 2, 3}, da = {0.5f, 0, 1};
  fvec3 ga = __enzyme_autodiff3((void *)f3, a);
  near("f3 x", ga.x, 2); near("f3 y", ga.y, 1); near("f3 z", ga.z, 12);
  near("f3 fwd", __enzyme_fwddiff((void *)f3, a, da), 0.5 * 2 + 12);
  fvec4 b = {1, 2, 3, 4}, db = {0, 0, 0, 1};
  fvec4 gb = __enzyme_autodiff4((void *)f4, b);
  near("f4 x", gb.x, 2); near("f4 y", gb.y, 1);
  near("f4 z", gb.z, 1.5 * 4 / sqrt(12.0)); near("f4 w", gb.w, 1.5 * 3 / sqrt(12.0));
  near("f4 fwd", __enzyme_fwddiff((void *)f4, b, db), 1.5 * 3 / sqrt(12.0));
  printf("%s\n", bad ? "FAIL" : "ok");
  return bad;
}
""",
    "complex_and_vector_types": r"""
float _Complex __enzyme_autodiffc(void *, ...) __asm__("__enzyme_autodiff");
v2d __enzyme_autodiffv(void *, ...) __asm__("__enzyme_autodiff");
double fc(float _Complex z) { return crealf(z) * cimagf(z) + cimagf(z) * cimagf(z); }
double fv(v2d v) { return v[0] * v[1] * v[1] + log(v[0]); }
int main(void) {
  float _Complex z = 2.0f + 3.0f * I;
  float _Complex gz = __enzyme_autodiffc((void *)fc, z);
  near("fc re", crealf(gz), 3); near("fc im", cimagf(gz), 2 + 6);
  near("fc fwd", __enzyme_fwddiff((void *)fc, z, 1.0f * I), 8);
  v2d v = {2.0, 3.0}, dv = {1.0, 0.0};
  v2d gv = __enzyme_autodiffv((void *)fv, v);
  near("fv 0", gv[0], 9 + 0.5); near("fv 1", gv[1], 12);
  near("fv fwd", __enzyme_fwddiff((void *)fv, v, dv), 9.5);
  printf("%s\n", bad ? "FAIL" : "ok");
  return bad;
}
""",
}


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_vector_parameters(tmp_path, name, level):
    flags, env = LEVELS[level]
    out = built_and_run(tmp_path, HEAD + PROGRAMS[name], flags, env)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stdout + out.stderr
