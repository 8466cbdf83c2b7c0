"""Inline assembly with a known meaning, and the rounding trick it protects (ad/asm.py).

The class: libraries that spell one instruction, or a compiler barrier, in inline asm on
floating-point values — Eigen's SSE2 `pmin`/`pmax` (`minpd`/`maxpd` asm), its
`EIGEN_OPTIMIZATION_BARRIER` (an empty asm tied to a value), and the `(x + 2^52) - 2^52`
rounding its `print`/`pfloor` (and so its vectorized `exp`) rely on. Before, every one of
them was refused on active values ("inline assembly with active operands", "vector code on
active values"). Lowering the asm alone would have made the rounding trick differentiable
operation by operation, with derivative 1 instead of 0 — a silent wrong `exp'` — so the
trick is recognised and becomes `llvm.rint`. IR tests for each rewrite, verified by LLVM,
and compiled programs checked against central differences.
"""
from __future__ import annotations

import os

import pytest

from ad_helpers import FD_HEAD, check_fd_rows, fd_main, fd_rows
from enzyme_build.ad.asm import lower_known_asm, lower_rounding

EIGEN = "/usr/include/eigen3"


def _verify(text: str) -> None:
    import llvmlite.binding as llvm
    llvm.parse_assembly(text).verify()


def _module(body: list[str], sig="define <2 x double> @g(<2 x double> %a, ptr %p)") -> str:
    return "\n".join([sig + " {", "bb:", *body, "}"])


def test_minpd_maxpd_become_compare_and_select():
    text = _module([
        '  %m = call <2 x double> asm "minpd $1, $0", "=x,x,0,~{dirflag},~{fpsr},~{flags}"'
        '(<2 x double> %a, <2 x double> splat (double 7.0e+02))',
        '  %n = call noundef <2 x double> asm "maxpd $1, $0", "=x,x,0,~{dirflag},~{fpsr},~{flags}"'
        '(<2 x double> %m, <2 x double> splat (double -7.0e+02))',
        "  ret <2 x double> %n"])
    out = lower_known_asm(text)
    assert " asm " not in out
    # MINPD src=%a, dst=700: dst < src ? dst : src
    assert "fcmp olt <2 x double> splat (double 7.0e+02), %a" in out
    assert "%m = select <2 x i1>" in out and "fcmp ogt <2 x double> splat (double -7.0e+02), %m" in out
    _verify(out)


def test_barriers_become_identities_and_stores():
    text = _module([
        '  %b = call <2 x double> asm "", "=x,0,~{dirflag},~{fpsr},~{flags}"(<2 x double> %a)',
        '  call void asm "", "=*imr|x,0,~{dirflag},~{fpsr},~{flags}"(ptr nonnull elementtype(<2 x double>) %p, '
        '<2 x double> %b)',
        "  ret <2 x double> %b"])
    out = lower_known_asm(text)
    assert " asm " not in out
    assert "%b = fadd <2 x double> %a, splat (double -0.0)" in out
    assert "store <2 x double> %b, ptr %p" in out
    _verify(out)


def test_unknown_asm_is_left_alone():
    text = _module(['  %b = call <2 x double> asm "sqrtpd $1, $0", "=x,x,~{dirflag}"(<2 x double> %a)',
                    "  ret <2 x double> %b"])
    assert lower_known_asm(text) == text


@pytest.mark.parametrize("ty,magic,neg", [
    ("double", "0x4330000000000000", "0xC330000000000000"),      # 2^52
    ("double", "0x4338000000000000", "0xC338000000000000"),      # 1.5 * 2^52
    ("float", "0x4168000000000000", "0xC168000000000000"),       # 1.5 * 2^23 (12582912)
])
def test_rounding_trick_becomes_rint(ty, magic, neg):
    text = "\n".join([
        f"define {ty} @g({ty} %x) {{", "bb:",
        f"  %r = fadd {ty} %x, {magic}",
        f"  %b = fadd {ty} %r, -0.0",            # the lowered barrier
        f"  %y = fadd {ty} %b, {neg}",           # instcombine's form of fsub %b, M
        f"  %z = fsub {ty} %r, {magic}",
        f"  %s = fadd {ty} %y, %z",
        f"  ret {ty} %s", "}"])
    out = lower_rounding(text)
    suffix = "f64" if ty == "double" else "f32"
    assert f"%y = call {ty} @llvm.rint.{suffix}({ty} %x)" in out
    assert f"%z = call {ty} @llvm.rint.{suffix}({ty} %x)" in out
    assert f"declare {ty} @llvm.rint.{suffix}({ty})" in out
    _verify(out)


def test_other_constants_are_not_rounding():
    text = "\n".join(["define double @g(double %x) {", "bb:",
                      "  %r = fadd double %x, 1.000000e+06", "  %y = fsub double %r, 1.000000e+06",
                      "  ret double %y", "}"])
    assert lower_rounding(text) == text


HEAD = FD_HEAD + "#include <emmintrin.h>\n"
MAIN = fd_main()
# Eigen's SSE2 idioms written out: asm min/max clamps, a barrier-protected rounding, floor
SSE_IDIOMS = r"""
static inline __m128d pmin(__m128d a, __m128d b) { __m128d r = b; __asm__("minpd %[a], %[r]" : [r] "+x"(r) : [a] "x"(a)); return r; }
static inline __m128d pmax(__m128d a, __m128d b) { __m128d r = b; __asm__("maxpd %[a], %[r]" : [r] "+x"(r) : [a] "x"(a)); return r; }
static inline __m128d pfloor(__m128d a) {
  const __m128d limit = _mm_set1_pd(4503599627370496.0);       /* 2^52 */
  __m128d abs_a = _mm_andnot_pd(_mm_set1_pd(-0.0), a);
  __m128d r = _mm_add_pd(abs_a, limit);
  __asm__("" : "+g,x"(r));                                       /* EIGEN_OPTIMIZATION_BARRIER */
  r = _mm_sub_pd(r, limit);
  __m128d neg = _mm_cmplt_pd(a, _mm_setzero_pd());              /* Eigen's pselect(a < 0, -r, r) */
  r = _mm_or_pd(_mm_and_pd(neg, _mm_xor_pd(r, _mm_set1_pd(-0.0))), _mm_andnot_pd(neg, r));
  __m128d gt = _mm_cmpgt_pd(r, a);
  return _mm_sub_pd(r, _mm_and_pd(gt, _mm_set1_pd(1.0)));
}
__attribute__((noinline)) double f(const double *x) {
  __m128d a = _mm_loadu_pd(x), b = _mm_loadu_pd(x + 2);
  __m128d s = _mm_mul_pd(_mm_add_pd(a, b), _mm_set1_pd(2.7));   /* (5.4, -1.35) */
  __m128d c = pmax(pmin(s, _mm_set1_pd(2.5)), _mm_set1_pd(-2.5));  /* clamp: x0+x2 clamped, x1+x3 not */
  __m128d fr = _mm_sub_pd(s, pfloor(s));                           /* fractional part: derivative 1 */
  double o[2], p[2];
  _mm_storeu_pd(o, _mm_mul_pd(c, c));
  _mm_storeu_pd(p, fr);
  return o[0] + o[1] + 2 * p[0] + 5 * p[1];
}
"""


@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_sse_asm_clamps_and_rounding(tmp_path, level):
    rows = fd_rows(tmp_path, HEAD + SSE_IDIOMS + MAIN, [level])
    check_fd_rows(rows, 4)
    # lane 0 is clamped (derivative 0); the fractional part's derivative is 1 (rounding
    # contributes 0): d/dx0 = 2*2.7, d/dx1 = 2*2.7*s1 + 5*2.7
    assert rows[0][0] == pytest.approx(2 * 2.7)
    assert rows[1][0] == pytest.approx(2 * 2.7 * (2.7 * (-1.25 + 0.75)) + 5 * 2.7)


EIGEN_EXP = r"""
#include <Eigen/Dense>
#include <cstdio>
extern "C" { extern int enzyme_dup, enzyme_const; void __enzyme_autodiff(void *, ...); double __enzyme_fwddiff(void *, ...); }
extern "C" __attribute__((noinline)) double f(const double *x) {
  Eigen::ArrayXd a(6);
  for (int i = 0; i < 6; i++) a(i) = x[i % 4] * (i + 1) * 0.3;
  return (a.exp() * 0.5 + a.log1p().abs() + (a * 0.7).sin()).sum();   // vectorized pexp, plog, psin
}
int main() {
  double x[4] = {0.5, -0.25, 1.5, 0.75}, g[4] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, g);
  for (int i = 0; i < 4; i++) {
    double e[4] = {0}; e[i] = 1; double xp[4], xm[4];
    for (int k = 0; k < 4; k++) { xp[k] = x[k]; xm[k] = x[k]; }
    xp[i] += 1e-6; xm[i] -= 1e-6;
    std::printf("%.15g %.15g %.15g\n", g[i], __enzyme_fwddiff((void *)f, enzyme_dup, x, e), (f(xp) - f(xm)) / 2e-6);
  }
}
"""


@pytest.mark.skipif(not os.path.isdir(EIGEN), reason="libeigen3-dev is not installed (./bootstrap test installs it)")
def test_eigen_vectorized_math_functions(tmp_path):
    check_fd_rows(fd_rows(tmp_path, EIGEN_EXP, ["-O2"], cxx=True, extra=["-I", EIGEN]), 4)
