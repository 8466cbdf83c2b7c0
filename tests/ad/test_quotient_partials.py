"""The denominator's partial of a quotient in the reverse sweep: no second division.

For q = a / b the reverse sweep needs 1/b (the numerator's partial) and -q/b (the
denominator's). Built as -q * (1/b), q must be at hand: where the forward value is not usable
as it is (inside a loop, in a split reverse) the sweep divided again or kept q in a tape cell
per iteration. When the numerator comes for free (a re-read input, an IV, arithmetic of those)
the partial is now -(a * (1/b)) * (1/b): two products and the reciprocal the numerator's
partial needs anyway, hoisted when b is loop-invariant (`in[i] / mag`: the reverse loop of a
normalization divides nothing). Where q is at hand (straight-line code of the combined
gradient) or the numerator would itself need a cell, the old form stays.

Members: a normalization by an invariant, a quotient of two re-read arrays, a projection
`p / z` of cheap arithmetic, a numerator from a call (kept form), a quotient in straight-line
code (q at hand), an in-place division whose numerator is overwritten, and a reciprocal with
an invariant numerator. Each is checked against forward mode and central differences at -O0,
-O2 and with AD before optimization; the IR test counts the divisions of a reverse loop.
"""
from __future__ import annotations

import re

import pytest

from enzyme_build import llvm
from enzyme_build.ad.driver import differentiate_module
from ad_helpers import LEVELS, check_program_gradient, function_body

DECLS = """
@enzyme_dup = external global i32
@enzyme_const = external global i32
declare void @__enzyme_autodiff(ptr, ...)
"""

# s = sum_i x[i] / y[i]: both operands re-read in the reverse loop
RATIO_SUM = """
define double @f(ptr noalias %x, ptr noalias %y, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %s = phi double [ 0.0, %entry ], [ %s.next, %loop ]
  %px = getelementptr inbounds double, ptr %x, i64 %i
  %vx = load double, ptr %px, align 8
  %py = getelementptr inbounds double, ptr %y, i64 %i
  %vy = load double, ptr %py, align 8
  %q = fdiv double %vx, %vy
  %s.next = fadd double %s, %q
  %i.next = add nuw nsw i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret double %s.next
}

define void @g(ptr %x, ptr %dx, ptr %y, ptr %dy, i64 %n) {
entry:
  call void (ptr, ...) @__enzyme_autodiff(ptr @f, ptr @enzyme_dup, ptr %x, ptr %dx, ptr @enzyme_dup, ptr %y, ptr %dy, ptr @enzyme_const, i64 %n)
  ret void
}
"""


def test_a_quotient_of_re_read_operands_is_divided_once_in_the_reverse_loop():
    out = differentiate_module(RATIO_SUM + DECLS)
    llvm.verify(llvm.parse_assembly(out, "quotients"), generated=True)
    fn = function_body(out, "diffe_f")
    reverse = fn[fn.index("rev$"):]
    divisions = re.findall(r"= fdiv [^\n]*", reverse)
    # 1/y[i] for both partials (one value once LLVM's CSE merges the copies); the quotient
    # itself is not divided again
    assert divisions and len(set(divisions)) == 1, divisions
    assert re.search(r"fdiv double (1\.0+e\+00|0x3FF0000000000000), %", divisions[0]), divisions
    # nor kept: the loop's tape record holds nothing per iteration
    assert "%static.stride$0 = add i64 0, 0" in fn

PROGRAMS = {
    # out[i] = in[i] / mag: the reciprocal of the invariant is hoisted, the loop divides nothing
    "normalization": r"""
__attribute__((noinline)) static void normalize(double *out, const double *in, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += in[i] * in[i];
  double m = sqrt(s);
  for (int i = 0; i < n; i++) out[i] = in[i] / m;
}
double f(const double *x) {
  double out[4];
  normalize(out, x, 4);
  return out[0] * 0.3 + out[1] * out[2] - sin(out[3]);
}
""",
    # a sum of quotients of two arrays read again in the reverse loop
    "ratio_of_arrays": r"""
double f(const double *x) {
  double y[4], s = 0;
  for (int i = 0; i < 4; i++) y[i] = 1.5 + x[(i + 1) % 4] * x[(i + 1) % 4];
  for (int r = 0; r < 2; r++)
    for (int i = 0; i < 4; i++) s += (x[i] + r) / y[i];
  return s;
}
""",
    # a pinhole projection: both coordinates over the same depth, all cheap arithmetic
    "projection": r"""
double f(const double *x) {
  double s = 0;
  for (int k = 0; k < 3; k++) {
    double px = x[0] * (k + 1) - x[1], py = x[1] + 0.5 * x[2] * k, pz = 3.0 + x[3] * x[3] + k;
    double u = px / pz, v = py / pz;
    s += u * u + v * v + u * v;
  }
  return s;
}
""",
    # a numerator from a call: not obtainable for free, the quotient's own form stays
    "call_numerator": r"""
double f(const double *x) {
  double s = 0;
  for (int i = 0; i < 4; i++) s += sin(x[i] * x[(i + 1) % 4]) / (2.0 + x[(i + 2) % 4]);
  return s * s;
}
""",
    # straight-line code: the quotient is at hand in the combined gradient
    "straight_line": r"""
double f(const double *x) {
  double q = (x[0] + x[1]) / (x[2] * x[2] + 1.0);
  double r = x[3] / q;
  return q * r + sin(q) / (1.5 + x[1] * x[1]);
}
""",
    # division in place: the numerator is overwritten, so the quotient's own form stays
    "in_place": r"""
double f(const double *x) {
  double v[4], s = 0;
  for (int i = 0; i < 4; i++) v[i] = x[i] * x[(i + 3) % 4];
  double m = 1.0 + x[0] * x[0];
  for (int i = 0; i < 4; i++) v[i] = v[i] / m;
  for (int i = 0; i < 4; i++) s += v[i] * v[(i + 1) % 4];
  return s;
}
""",
    # an invariant numerator over a varying denominator (-c/x^2 via the kept reciprocal form)
    "reciprocal_scaled": r"""
double f(const double *x) {
  double c = x[0] * x[1] + 2.0, s = 0;
  for (int i = 0; i < 4; i++) s += c / (1.25 + x[i] * x[i]);
  return s;
}
""",
}


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_programs_with_quotients_get_the_right_gradient(name, level, tmp_path):
    check_program_gradient(tmp_path, PROGRAMS[name], level)
