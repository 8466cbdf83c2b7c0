"""Vector floating-point code, differentiated after the AD stage splits it into scalars.

The class (issue 13, item 2): `<2 x double>` / `<4 x float>` loads, stores, arithmetic,
shuffles and vector intrinsics on active data — SSE2 intrinsics, GCC vector extensions with
`__builtin_shufflevector`, Eigen's packets (fixed-size matrices at every level, dynamic
matrices through its GEBP product kernel and LU solve). They were refused at every level
("vector/aggregate access '<2 x double>' to active memory"). The stage runs LLVM's
Scalarizer before the engine (and reassembles doubles it split into 32-bit lanes), so every
mode sees scalar code. Each program is checked in reverse and forward mode against closed
forms or central differences.

Also here: a pointer kept as an integer in active memory (`uintptr_t` fields, Eigen's
evaluators store a matrix's address with ptrtoint): its shadow is stored the same way
(before, the shadow field stayed unset and the derivative was undefined behaviour — the
optimizer deleted the program's output).
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

ENZYME_BUILD = os.path.join(os.path.dirname(sys.executable), "enzyme-build")
EIGEN = "/usr/include/eigen3"

X = [0.5, -1.25, 1.5, 0.75]

C_HEAD = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
"""

C_MAIN = r"""
int main(void) {
  double x[4] = {0.5, -1.25, 1.5, 0.75}, g[4] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, g);
  for (int i = 0; i < 4; i++) {
    double e[4] = {0}; e[i] = 1;
    double xp[4], xm[4];
    for (int k = 0; k < 4; k++) { xp[k] = x[k]; xm[k] = x[k]; }
    xp[i] += 1e-6; xm[i] -= 1e-6;
    printf("%.15g %.15g %.15g\n", g[i], __enzyme_fwddiff((void *)f, enzyme_dup, x, e),
           (f(xp) - f(xm)) / 2e-6);
  }
  return 0;
}
"""

C_PROGRAMS = {
    # SSE2 intrinsics: two <2 x double> loads, products, a store to a local
    "sse2_intrinsics": (r"""
#include <emmintrin.h>
__attribute__((noinline)) double f(const double *x) {
  __m128d a = _mm_loadu_pd(x), b = _mm_loadu_pd(x + 2);
  __m128d c = _mm_add_pd(_mm_mul_pd(a, b), _mm_mul_pd(a, a));
  double out[2];
  _mm_storeu_pd(out, c);
  return out[0] + 3 * out[1];
}""", [X[2] + 2 * X[0], 3 * (X[3] + 2 * X[1]), X[0], 3 * X[1]]),
    # GCC vector extensions with a lane swap and a square root
    "vector_extension_shuffle": (r"""
typedef double v2d __attribute__((vector_size(16)));
__attribute__((noinline)) double f(const double *x) {
  v2d a = {x[0], x[1]}, b = {x[2], x[3]};
  v2d s = __builtin_shufflevector(a, a, 1, 0);      /* (x1, x0) */
  v2d p = s * b + a;                                /* (x1 x2 + x0, x0 x3 + x1) */
  return sqrt(p[0] * p[0] + 1.0) + p[1] * p[1];
}""", None),
    # SSE single precision: <4 x float> arithmetic, horizontal sum by shuffles
    "sse_float4": (r"""
#include <xmmintrin.h>
__attribute__((noinline)) double f(const double *x) {
  __m128 a = _mm_set_ps((float)x[3], (float)x[2], (float)x[1], (float)x[0]);
  __m128 b = _mm_mul_ps(a, a);
  __m128 s = _mm_add_ps(b, _mm_shuffle_ps(b, b, _MM_SHUFFLE(2, 3, 0, 1)));
  s = _mm_add_ps(s, _mm_shuffle_ps(s, s, _MM_SHUFFLE(1, 0, 3, 2)));
  return (double)_mm_cvtss_f32(s);
}""", [2 * v for v in X]),
    # a pointer kept in an integer field of a struct that lives in active memory
    "pointer_in_uintptr_field": (r"""
struct view { uintptr_t data; long n; };
__attribute__((noinline)) double total(const struct view *v) {
  const double *p = (const double *)v->data;
  double s = 0;
  for (long i = 0; i < v->n; i++) s += p[i] * p[i];
  return s;
}
__attribute__((noinline)) double f(const double *x) {
  double *buf = malloc(4 * sizeof(double));
  for (int i = 0; i < 4; i++) buf[i] = x[i] * (i + 1);
  struct view v = { (uintptr_t)buf, 4 };
  double s = total(&v);
  free(buf);
  return s;
}""", [2 * (i + 1) ** 2 * X[i] for i in range(4)]),
    # a workspace aligned by hand through uintptr_t arithmetic (rev-18), two alignments
    "aligned_by_hand": (r"""
__attribute__((noinline)) double f(const double *x) {
  char *raw = malloc(8 * sizeof(double) + 63);
  double *w = (double *)(((uintptr_t)raw + 63) & ~(uintptr_t)63);
  char *raw2 = malloc(4 * sizeof(double) + 15);
  double *v = (double *)((uintptr_t)(raw2 + 15) & (uintptr_t)-16);
  for (int i = 0; i < 4; i++) { w[i] = x[i] * x[i]; v[i] = w[i] * (i + 1); }
  double s = 0;
  for (int i = 0; i < 4; i++) s += v[i] + w[i];
  free(raw); free(raw2);
  return s;
}""", [2 * X[i] * (i + 2) for i in range(4)]),
}


def _build_run(tmp_path, src_name: str, text: str, level: str, cxx: bool = False, extra=()):
    src = tmp_path / src_name
    src.write_text(text)
    exe = tmp_path / "prog"
    r = subprocess.run([ENZYME_BUILD, "c++" if cxx else "cc", level, *extra, str(src), "-o", str(exe), "-lm"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return [tuple(float(v) for v in line.split()) for line in out.stdout.splitlines()]


@pytest.mark.parametrize("level", ["-O0", "-O2"])
@pytest.mark.parametrize("name", sorted(C_PROGRAMS))
def test_vector_c_programs(tmp_path, name, level):
    body, want = C_PROGRAMS[name]
    rows = _build_run(tmp_path, f"{name}.c", C_HEAD + body + C_MAIN, level)
    assert len(rows) == 4, rows
    single = "float4" in name
    for i, (rev, fwd, fd) in enumerate(rows):
        assert rev == pytest.approx(fwd, rel=1e-6 if single else 1e-12, abs=1e-9), (i, rows)
        if want is not None:
            assert rev == pytest.approx(want[i], rel=1e-6 if single else 1e-10), (i, rows)
        if not single:
            assert rev == pytest.approx(fd, rel=1e-5, abs=1e-6), (i, rows)


EIGEN_PROGRAM = r"""
#include <Eigen/Dense>
#include <cstdio>
extern int enzyme_dup, enzyme_const;
extern "C" void __enzyme_autodiff(void *, ...);
extern "C" double __enzyme_fwddiff(void *, ...);
using namespace Eigen;
__attribute__((noinline)) double f(const double *x) {
  // fixed size: products, a transpose, norms, a 2x2 inverse
  Matrix3d A;
  A << x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8];
  Vector3d v(x[0], x[4], x[8]);
  Vector3d w = A * v + A.transpose() * v;
  Matrix2d C; C << x[2] + 2, x[3], x[4], x[5] + 2;
  Vector2d z = C.inverse() * Vector2d(1.0, x[6]);
  double fixed = w.squaredNorm() + (A * A).trace() + w.norm() + z.norm();
  // dynamic size: a GEBP product, the trace of a lazy product, an LU solve
  MatrixXd P(6, 6), Q(6, 6);
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 6; j++) { P(i, j) = x[(i + j) % 9] * (i + 1); Q(i, j) = x[(2 * i + j) % 9] - j; }
  MatrixXd R = P * Q;
  MatrixXd S(3, 3);
  for (int i = 0; i < 3; i++) for (int j = 0; j < 3; j++) S(i, j) = x[3 * i + j] + (i == j ? 3.0 : 0.0);
  VectorXd b(3); b << x[0], x[1], 1.0;
  VectorXd y = S.partialPivLu().solve(b);
  double dynamic = R.squaredNorm() * 1e-3 + (P.transpose() * Q).trace() + y.squaredNorm() + y.sum() * x[8];
  return fixed + dynamic;
}
int main() {
  double x[9] = {0.5, -1.25, 1.5, 0.75, 0.3, -0.2, 1.1, 0.4, -0.6}, g[9] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, g);
  for (int i = 0; i < 9; i++) {
    double e[9] = {0}; e[i] = 1;
    double xp[9], xm[9];
    for (int k = 0; k < 9; k++) { xp[k] = x[k]; xm[k] = x[k]; }
    xp[i] += 1e-6; xm[i] -= 1e-6;
    std::printf("%.15g %.15g %.15g\n", g[i], __enzyme_fwddiff((void *)f, enzyme_dup, x, e),
                (f(xp) - f(xm)) / 2e-6);
  }
  return 0;
}
"""


@pytest.mark.skipif(not os.path.isdir(EIGEN), reason="libeigen3-dev is not installed (./bootstrap test installs it)")
@pytest.mark.parametrize("level", ["-O0", "-O1", "-O2", "-O3"])
def test_eigen_fixed_and_dynamic(tmp_path, level):
    rows = _build_run(tmp_path, "eigen.cpp", EIGEN_PROGRAM, level, cxx=True, extra=["-I", EIGEN])
    assert len(rows) == 9, rows
    for i, (rev, fwd, fd) in enumerate(rows):
        assert rev == pytest.approx(fwd, rel=1e-10, abs=1e-10), (i, rows)
        assert rev == pytest.approx(fd, rel=1e-5, abs=1e-5), (i, rows)


def test_scalarizer_reassembles_doubles_split_into_lanes():
    from enzyme_build.ad.stage import reassemble_split_doubles
    text = "\n".join([
        "define double @g(ptr %p) {",
        "bb:",
        "  %q = getelementptr i8, ptr %p, i64 8",
        "  %a = load i32, ptr %q, align 8",
        "  %q4 = getelementptr i8, ptr %p, i64 12",
        "  %b = load i32, ptr %q4, align 4",
        "  %v0 = insertelement <2 x i32> poison, i32 %a, i64 0",
        "  %v1 = insertelement <2 x i32> %v0, i32 %b, i64 1",
        "  %d = bitcast <2 x i32> %v1 to double",
        "  ret double %d",
        "}"])
    out = reassemble_split_doubles(text)
    assert "bitcast <2 x i32>" not in out
    assert "  %d = load double, ptr %q, align 4" in out
    # not consecutive: left alone
    assert reassemble_split_doubles(text.replace("i64 12", "i64 16")) == text.replace("i64 12", "i64 16")
    # a store between the two halves: left alone
    racy = text.replace("  %q4 =", "  store i32 0, ptr %p, align 4\n  %q4 =")
    assert reassemble_split_doubles(racy) == racy


EIGEN_TENSOR_PROGRAM = r"""
#include <unsupported/Eigen/CXX11/Tensor>
#include <cstdio>
extern "C" { extern int enzyme_dup, enzyme_const; void __enzyme_autodiff(void *, ...); double __enzyme_fwddiff(void *, ...); }
extern "C" __attribute__((noinline)) double f(const double *x) {
  Eigen::Tensor<double, 2> A(3, 4), B(4, 2);
  for (int i = 0; i < 3; i++) for (int j = 0; j < 4; j++) A(i, j) = x[(i + j) % 6] * (i + 1);
  for (int i = 0; i < 4; i++) for (int j = 0; j < 2; j++) B(i, j) = x[(2 * i + j) % 6] - j;
  Eigen::array<Eigen::IndexPair<int>, 1> dims = { Eigen::IndexPair<int>(1, 0) };
  Eigen::Tensor<double, 2> C = A.contract(B, dims);                 // a contraction (GEMM kernel)
  Eigen::Tensor<double, 2> D = (C * 0.1).exp() * 0.5 + C.square();  // vectorized exp
  Eigen::Tensor<double, 0> s = D.sum();                              // a full reduction
  return s();
}
int main() {
  double x[6] = {0.5, -1.25, 1.5, 0.75, 0.3, -0.2}, g[6] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, g);
  for (int i = 0; i < 6; i++) {
    double e[6] = {0}; e[i] = 1; double xp[6], xm[6];
    for (int k = 0; k < 6; k++) { xp[k] = x[k]; xm[k] = x[k]; }
    xp[i] += 1e-6; xm[i] -= 1e-6;
    std::printf("%.15g %.15g %.15g\n", g[i], __enzyme_fwddiff((void *)f, enzyme_dup, x, e), (f(xp) - f(xm)) / 2e-6);
  }
  return 0;
}
"""


@pytest.mark.skipif(not os.path.isdir(EIGEN), reason="libeigen3-dev is not installed (./bootstrap test installs it)")
@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_eigen_tensor(tmp_path, level):
    """Eigen's Tensor module: evaluators copied as words (dimensions next to data pointers:
    pointer carriers, offset-exact memcpy kinds), its SSE2 asm min/max and the rounding
    trick in its vectorized exp (tests/ad/test_asm_idioms.py). It was refused ("cannot tell
    whether the integer copy … moves pointer data", "memcpy of data of unknown type")."""
    rows = _build_run(tmp_path, "tensor.cpp", EIGEN_TENSOR_PROGRAM, level, cxx=True, extra=["-I", EIGEN])
    assert len(rows) == 6, rows
    for i, (rev, fwd, fd) in enumerate(rows):
        assert rev == pytest.approx(fwd, rel=1e-10, abs=1e-10), (i, rows)
        assert rev == pytest.approx(fd, rel=1e-5, abs=1e-5), (i, rows)


SSE_MODES_PROGRAM = r"""
#include <stdio.h>
#include <math.h>
#include <emmintrin.h>
extern int enzyme_dup, enzyme_const, enzyme_width, enzyme_dupnoneed;
void __enzyme_autodiff(void *, ...);
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);
typedef struct { double d[2]; } d2;
d2 __enzyme_fwddiff_w2(void *, ...);
__attribute__((noinline)) double f(const double *x) {
  __m128d a = _mm_loadu_pd(x), b = _mm_loadu_pd(x + 2);
  __m128d c = _mm_add_pd(_mm_mul_pd(a, b), _mm_mul_pd(a, a));
  double out[2];
  _mm_storeu_pd(out, _mm_mul_pd(c, _mm_set1_pd(0.5)));
  return sin(out[0]) + 3 * out[1] * out[1];
}
int main(void) {
  double x[4] = {0.5, -1.25, 1.5, 0.75}, g[4] = {0}, gs[4] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, g);
  void *tape = __enzyme_augmentfwd((void *)f, enzyme_dup, x, gs);
  __enzyme_reverse((void *)f, enzyme_dup, x, gs, 1.0, tape);
  for (int i = 0; i < 4; i += 2) {
    double e0[4] = {0}, e1[4] = {0}; e0[i] = 1; e1[i + 1] = 1;
    d2 t = __enzyme_fwddiff_w2((void *)f, enzyme_width, 2, enzyme_dup, x, e0, e1);
    for (int k = 0; k < 2; k++) {
      double xp[4], xm[4];
      for (int j = 0; j < 4; j++) { xp[j] = x[j]; xm[j] = x[j]; }
      xp[i + k] += 1e-6; xm[i + k] -= 1e-6;
      printf("%.15g %.15g %.15g %.15g\n", g[i + k], gs[i + k], t.d[k], (f(xp) - f(xm)) / 2e-6);
    }
  }
  return 0;
}
"""


@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_sse_code_in_split_and_vector_modes(tmp_path, level):
    """SSE2 vector code in the other two modes: split (augmented forward + reverse with the
    tape) and vector forward mode (`enzyme_width` 2), against combined reverse mode and a
    central difference."""
    rows = _build_run(tmp_path, "modes.c", SSE_MODES_PROGRAM, level)
    assert len(rows) == 4, rows
    for i, (rev, split, vec, fd) in enumerate(rows):
        assert split == pytest.approx(rev, rel=1e-12, abs=1e-12), (i, rows)
        assert vec == pytest.approx(rev, rel=1e-12, abs=1e-12), (i, rows)
        assert rev == pytest.approx(fd, rel=1e-5, abs=1e-5), (i, rows)
