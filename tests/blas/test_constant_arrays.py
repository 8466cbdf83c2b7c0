"""Constant arrays at BLAS calls: enzyme_const arguments passed straight to the routine,
a constant global matrix, a buffer the function fills with constants, in reverse,
forward, split and vector mode. The rule gets a null shadow for the constant array and
skips its adjoint (the program checks its gradients and tangents against finite
differences, and that nothing is written through a constant's would-be shadow); the IR
the engine emits passes `ptr null` and allocates no shadow for the never-active buffer.
Built once, run against reference BLAS/LAPACK and OpenBLAS.
"""
from __future__ import annotations

import os
import re
import subprocess

import pytest

from blas_helpers import OPENBLAS_DIR, REFERENCE_DIR, REFERENCE_LAPACK_DIR, build, run, write

pytestmark = pytest.mark.skipif(not os.path.exists(os.path.join(REFERENCE_DIR, "libblas.so.3"))
                                or not os.path.exists(os.path.join(OPENBLAS_DIR, "libopenblas.so")),
                                reason="needs libblas-dev, liblapack-dev and libopenblas-dev")

PROGRAM = r"""
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cblas.h>
extern int enzyme_dup, enzyme_const, enzyme_width;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
typedef struct { double d[2]; } v2;
v2 __enzyme_fwddiff_w2(void *, ...);
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);
void dpotrf_(const char *, const int *, double *, const int *, int *, size_t);
void dpotrs_(const char *, const int *, const int *, const double *, const int *, double *, const int *,
             int *, size_t);
enum { M = 3, N = 4, K = 2, NA = 16 };
static int bad;
static const double G[M * N] = {0.5, -1, 2, 0.25, 1.5, -0.75, 1, 0.3, -0.2, 0.8, 0.6, -1.1};

/* each loss: the routine's output through a quadratic; a is M x K, b K x N, c M x N */
static double sq(const double *y, int n) { double s = 0; for (int i = 0; i < n; i++) s += y[i] * y[i] + 0.3 * y[i]; return s; }
double gemm_loss(const double *a, const double *b, double *c) {
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, M, N, K, 0.9, a, M, b, K, 0.5, c, M);
  return sq(c, M * N);
}
double gemv_global(const double *x, double *y) {       /* the matrix is a constant global */
  cblas_dgemv(CblasRowMajor, CblasNoTrans, M, N, 1.0, G, N, x, 1, 0.0, y, 1);
  return sq(y, M);
}
double gemv_filled(const double *x, double *y) {       /* the matrix is never-active memory */
  double *A = malloc(M * N * sizeof(double));
  for (int i = 0; i < M * N; i++) A[i] = cos(0.3 * i);
  cblas_dgemv(CblasColMajor, CblasTrans, N, M, 1.0, A, N, x, 1, 0.0, y, 1);
  free(A);
  return sq(y, M);
}
double dot_loss(const double *x, const double *y) { double d = cblas_ddot(N, x, 1, y, 1); return d * d + d; }
/* solve with a Cholesky factor the caller made: the factor is constant, B is solved in place */
double potrs_loss(const double *L, double *B) {
  int n = 3, nrhs = 2, info;
  dpotrs_("L", &n, &nrhs, L, &n, B, &n, &info, 1);
  return sq(B, 6);
}

static void check(const char *what, double ad, double fd) {
  if (fabs(ad - fd) > 1e-6 * (1 + fabs(fd))) { bad++; printf("FAIL %s: ad %.10g fd %.10g\n", what, ad, fd); }
}
static void untouched(const char *what, const double *d, int n) {
  for (int i = 0; i < n; i++) if (d[i] != 0) { bad++; printf("FAIL %s: constant's shadow written\n", what); return; }
}
static double init(int k, int i) { return 0.4 * sin(1.7 * i + k) + 0.1 * k; }
/* finite difference of loss(x...) along the arrays' directions v (or one element) */
typedef double (*loss3)(double *, double *, double *);
static double fd3(loss3 f, double *const *x, const int *sz, double *const *v, int ai, int ei) {
  double h = 1e-6, r[2];
  for (int s = 0; s < 2; s++) {
    double *c[3];
    for (int a = 0; a < 3; a++) {
      c[a] = malloc(NA * sizeof(double));
      memcpy(c[a], x[a], NA * sizeof(double));
      for (int i = 0; i < sz[a]; i++) {
        double step = v ? (v[a] ? v[a][i] : 0) : (a == ai && i == ei);
        c[a][i] += (s ? -h : h) * step;
      }
    }
    r[s] = f(c[0], c[1], c[2]);
    for (int a = 0; a < 3; a++) free(c[a]);
  }
  return (r[0] - r[1]) / (2 * h);
}
static double gemm3(double *a, double *b, double *c) { return gemm_loss(a, b, c); }
static double gemvg3(double *x, double *y, double *u) { (void)u; return gemv_global(x, y); }
static double gemvf3(double *x, double *y, double *u) { (void)u; return gemv_filled(x, y); }
static double dot3(double *x, double *y, double *u) { (void)u; return dot_loss(x, y); }
static double potrs3(double *l, double *b, double *u) { (void)u; return potrs_loss(l, b); }

int main(void) {
  static const int gsz[3] = {M * K, K * N, M * N};
  double *x[3], *d[3], *v[3], *w[3], *x0[3];
  for (int a = 0; a < 3; a++) {
    x[a] = calloc(NA, sizeof(double)); d[a] = calloc(NA, sizeof(double)); x0[a] = calloc(NA, sizeof(double));
    v[a] = calloc(NA, sizeof(double)); w[a] = calloc(NA, sizeof(double));
    for (int i = 0; i < NA; i++) { x0[a][i] = init(a, i); v[a][i] = cos(2.1 * i + a); w[a][i] = sin(0.9 * i - a); }
  }
  /* inputs, adjoints and directions afresh (forward mode writes tangents into v and w) */
#define RESET() for (int a = 0; a < 3; a++) { memcpy(x[a], x0[a], NA * sizeof(double)); memset(d[a], 0, NA * sizeof(double)); \
    for (int i = 0; i < NA; i++) { v[a][i] = cos(2.1 * i + a); w[a][i] = sin(0.9 * i - a); } }
  char what[64];
  /* gemm: A, B or C's old value constant in turn; reverse, forward, split, vector */
  for (int c = 0; c < 3; c++) {
    RESET();
    if (c == 0) __enzyme_autodiff((void *)gemm_loss, enzyme_const, x[0], enzyme_dup, x[1], d[1], enzyme_dup, x[2], d[2]);
    if (c == 1) __enzyme_autodiff((void *)gemm_loss, enzyme_dup, x[0], d[0], enzyme_const, x[1], enzyme_dup, x[2], d[2]);
    if (c == 2) {   /* C constant: the routine's output goes to memory the caller declared constant */
      __enzyme_autodiff((void *)gemm_loss, enzyme_dup, x[0], d[0], enzyme_dup, x[1], d[1], enzyme_const, x[2]);
    }
    untouched("gemm reverse", d[c], gsz[c]);
    for (int a = 0; a < 3; a++) {
      if (a == c || c == 2) continue;
      for (int i = 0; i < gsz[a]; i++) {
        RESET();
        double fd = fd3(gemm3, x, gsz, NULL, a, i);
        RESET();
        if (c == 0) __enzyme_autodiff((void *)gemm_loss, enzyme_const, x[0], enzyme_dup, x[1], d[1], enzyme_dup, x[2], d[2]);
        else __enzyme_autodiff((void *)gemm_loss, enzyme_dup, x[0], d[0], enzyme_const, x[1], enzyme_dup, x[2], d[2]);
        snprintf(what, sizeof what, "gemm const %d reverse d%d[%d]", c, a, i);
        check(what, d[a][i], fd);
      }
    }
    /* forward and split along v with the constant's direction zero */
    double *dir[3] = {v[0], v[1], v[2]};
    dir[c] = NULL;
    RESET();
    double fd = fd3(gemm3, x, gsz, dir, -1, -1);
    RESET();
    double t = c == 0 ? __enzyme_fwddiff((void *)gemm_loss, enzyme_const, x[0], enzyme_dup, x[1], v[1], enzyme_dup, x[2], v[2])
             : c == 1 ? __enzyme_fwddiff((void *)gemm_loss, enzyme_dup, x[0], v[0], enzyme_const, x[1], enzyme_dup, x[2], v[2])
             : __enzyme_fwddiff((void *)gemm_loss, enzyme_dup, x[0], v[0], enzyme_dup, x[1], v[1], enzyme_const, x[2]);
    if (c < 2) { snprintf(what, sizeof what, "gemm const %d forward", c); check(what, t, fd); }
    double *wdir[3] = {w[0], w[1], w[2]};
    wdir[c] = NULL;
    RESET();
    double fdw = fd3(gemm3, x, gsz, wdir, -1, -1);
    RESET();
    v2 t2 = c == 0 ? __enzyme_fwddiff_w2((void *)gemm_loss, enzyme_width, 2, enzyme_const, x[0],
                                         enzyme_dup, x[1], v[1], w[1], enzyme_dup, x[2], v[2], w[2])
          : c == 1 ? __enzyme_fwddiff_w2((void *)gemm_loss, enzyme_width, 2, enzyme_dup, x[0], v[0], w[0],
                                         enzyme_const, x[1], enzyme_dup, x[2], v[2], w[2])
          : __enzyme_fwddiff_w2((void *)gemm_loss, enzyme_width, 2, enzyme_dup, x[0], v[0], w[0],
                                enzyme_dup, x[1], v[1], w[1], enzyme_const, x[2]);
    if (c < 2) {
      snprintf(what, sizeof what, "gemm const %d vector lane 0", c); check(what, t2.d[0], fd);
      snprintf(what, sizeof what, "gemm const %d vector lane 1", c); check(what, t2.d[1], fdw);
    } else if (t2.d[0] != 0 || t2.d[1] != 0 || t != 0) {
      bad++; printf("FAIL gemm const C: a tangent through constant memory\n");
    }
    if (c == 0) {   /* split mode: the tape, then the gradient of B; compared with one sweep */
      double db2[NA] = {0}, dc2[NA] = {0};
      RESET();
      __enzyme_autodiff((void *)gemm_loss, enzyme_const, x[0], enzyme_dup, x[1], d[1], enzyme_dup, x[2], d[2]);
      for (int a = 0; a < 3; a++) memcpy(x[a], x0[a], NA * sizeof(double));
      void *tape = __enzyme_augmentfwd((void *)gemm_loss, enzyme_const, x[0], enzyme_dup, x[1], db2, enzyme_dup, x[2], dc2);
      __enzyme_reverse((void *)gemm_loss, enzyme_const, x[0], enzyme_dup, x[1], db2, enzyme_dup, x[2], dc2, 1.0, tape);
      for (int i = 0; i < gsz[1]; i++) { snprintf(what, sizeof what, "gemm split dB[%d]", i); check(what, db2[i], d[1][i]); }
    }
  }
  /* gemv through a constant global matrix and through a never-active buffer */
  loss3 gl[2] = {gemvg3, gemvf3};
  for (int k = 0; k < 2; k++) {
    int nx = N, sz[3] = {N, M, 1};
    RESET();
    if (k) __enzyme_autodiff((void *)gemv_filled, enzyme_dup, x[0], d[0], enzyme_dup, x[1], d[1]);
    else __enzyme_autodiff((void *)gemv_global, enzyme_dup, x[0], d[0], enzyme_dup, x[1], d[1]);
    double *g0 = malloc(NA * sizeof(double));
    memcpy(g0, d[0], NA * sizeof(double));
    for (int i = 0; i < nx; i++) {
      RESET();
      snprintf(what, sizeof what, "gemv %s dx[%d]", k ? "filled" : "global", i);
      check(what, g0[i], fd3(gl[k], x, sz, NULL, 0, i));
    }
    free(g0);
    double *dir[3] = {v[0], NULL, NULL};
    RESET();
    double fd = fd3(gl[k], x, sz, dir, -1, -1);
    RESET();
    double t = k ? __enzyme_fwddiff((void *)gemv_filled, enzyme_dup, x[0], v[0], enzyme_dup, x[1], v[1])
                 : __enzyme_fwddiff((void *)gemv_global, enzyme_dup, x[0], v[0], enzyme_dup, x[1], v[1]);
    snprintf(what, sizeof what, "gemv %s forward", k ? "filled" : "global"); check(what, t, fd);
    double *wd[3] = {w[0], NULL, NULL};
    RESET();
    double fdw = fd3(gl[k], x, sz, wd, -1, -1);
    RESET();
    v2 t2 = k ? __enzyme_fwddiff_w2((void *)gemv_filled, enzyme_width, 2, enzyme_dup, x[0], v[0], w[0],
                                    enzyme_dup, x[1], v[1], w[1])
              : __enzyme_fwddiff_w2((void *)gemv_global, enzyme_width, 2, enzyme_dup, x[0], v[0], w[0],
                                    enzyme_dup, x[1], v[1], w[1]);
    snprintf(what, sizeof what, "gemv %s vector", k ? "filled" : "global");
    check(what, t2.d[0], fd); check(what, t2.d[1], fdw);
  }
  /* dot with a constant x */
  {
    int sz[3] = {N, N, 1};
    RESET();
    __enzyme_autodiff((void *)dot_loss, enzyme_const, x[0], enzyme_dup, x[1], d[1]);
    untouched("dot", d[0], N);
    double g[N];
    memcpy(g, d[1], sizeof g);
    for (int i = 0; i < N; i++) { RESET(); snprintf(what, sizeof what, "dot dy[%d]", i); check(what, g[i], fd3(dot3, x, sz, NULL, 1, i)); }
    double *dir[3] = {NULL, v[1], NULL};
    RESET();
    double t = __enzyme_fwddiff((void *)dot_loss, enzyme_const, x[0], enzyme_dup, x[1], v[1]);
    check("dot forward", t, fd3(dot3, x, sz, dir, -1, -1));
  }
  /* potrs with a constant Cholesky factor (made by potrf), B active */
  {
    double A[9] = {4, 1, 0.5, 1, 3, 0.2, 0.5, 0.2, 2};
    int n = 3, info;
    dpotrf_("L", &n, A, &n, &info, 1);
    int sz[3] = {9, 6, 1};
    memcpy(x0[0], A, sizeof A);
    RESET();
    __enzyme_autodiff((void *)potrs_loss, enzyme_const, x[0], enzyme_dup, x[1], d[1]);
    double g[6];
    memcpy(g, d[1], sizeof g);
    for (int i = 0; i < 6; i++) { RESET(); snprintf(what, sizeof what, "potrs dB[%d]", i); check(what, g[i], fd3(potrs3, x, sz, NULL, 1, i)); }
    double *dir[3] = {NULL, v[1], NULL};
    RESET();
    double fd = fd3(potrs3, x, sz, dir, -1, -1);
    RESET();
    check("potrs forward", __enzyme_fwddiff((void *)potrs_loss, enzyme_const, x[0], enzyme_dup, x[1], v[1]), fd);
    double *wd[3] = {NULL, w[1], NULL};
    RESET();
    double fdw = fd3(potrs3, x, sz, wd, -1, -1);
    RESET();
    v2 t2 = __enzyme_fwddiff_w2((void *)potrs_loss, enzyme_width, 2, enzyme_const, x[0], enzyme_dup, x[1], v[1], w[1]);
    check("potrs vector lane 0", t2.d[0], fd); check("potrs vector lane 1", t2.d[1], fdw);
  }
  printf("%s %d\n", bad ? "MISMATCH" : "OK", bad);
  return bad != 0;
}
"""


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    work = tmp_path_factory.mktemp("blas_const")
    write(work, "const.c", PROGRAM)
    keep = work / "keep"
    proc = subprocess.run([*build_command(work)], cwd=work, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, ENZYME_BUILD_KEEP=str(keep)))
    return work, proc, keep


def build_command(work):
    from blas_helpers import ENZYME_BUILD
    return [ENZYME_BUILD, "cc", "-O2", "const.c", "-o", "const", f"-L{REFERENCE_DIR}", f"-L{REFERENCE_LAPACK_DIR}",
            "-llapack", "-lblas", "-lm"]


@pytest.mark.parametrize("library", ["reference", "openblas"])
def test_constant_arrays_match_finite_differences(binary, library):
    work, proc, _ = binary
    assert proc.returncode == 0, proc.stderr
    env = dict(os.environ, LD_LIBRARY_PATH=f"{REFERENCE_DIR}:{REFERENCE_LAPACK_DIR}" if library == "reference"
               else OPENBLAS_DIR)
    run = subprocess.run([str(work / "const")], capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0 and run.stdout.strip().endswith("OK 0"), run.stdout[-3000:]


def test_constant_matrix_gets_a_null_shadow_and_no_shadow_memory(binary):
    """The rule calls of the derivatives pass `ptr null` for the constant global matrix and for
    the never-active buffer; that buffer gets no shadow allocation."""
    _, proc, keep = binary
    assert proc.returncode == 0, proc.stderr
    (out,) = list(keep.glob("*.ad/ad-output.ll"))
    text = out.read_text()

    def body(prefix: str) -> str:
        m = re.search(rf"^define [^\n]*@{prefix}\w*\([^\n]*\{{\n(.*?)^\}}", text, re.M | re.S)
        assert m, prefix
        return m.group(1)

    for derived in ("diffe_gemv_global", "diffe_gemv_filled"):
        calls = re.findall(r"call \w+ @__enzyme_blas_dgemv_(?:aug|grad)\(([^\n]*)\)", body(derived))
        assert len(calls) == 2, derived
        for args in calls:
            # core: layout, trans, m, n, alpha+shadow, A+shadow, ...: A's shadow is argument 8
            assert [a.strip() for a in args.split(",")][7] == "ptr null", (derived, args)
    filled = body("diffe_gemv_filled")
    assert len(re.findall(r"call [^\n]*@(?:malloc|calloc)\(", filled)) == 1, filled   # the primal buffer only


GESV_GLOBAL_PIVOTS = r"""
#include <stdio.h>
#include <math.h>
#include <string.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
void dgesv_(const int *, const int *, double *, const int *, int *, double *, const int *, int *);
static int piv[3], inf;
double f(double *A, double *B) {
  int n = 3, nrhs = 1;
  dgesv_(&n, &nrhs, A, &n, piv, B, &n, &inf);
  return B[0] * B[0] + B[1] - B[2] * A[4];
}
int main(void) {
  double A0[9] = {2, 1, 0.5, -1, 3, 0.2, 0.5, 0.7, 4}, B0[3] = {1, -2, 0.5};
  double A[9], B[3], dA[9] = {0}, dB[3] = {0};
  memcpy(A, A0, sizeof A); memcpy(B, B0, sizeof B);
  __enzyme_autodiff((void *)f, enzyme_dup, A, dA, enzyme_dup, B, dB);
  int bad = 0; double h = 1e-6;
  for (int i = 0; i < 12; i++) {
    double Ap[9], Bp[3], Am[9], Bm[3];
    memcpy(Ap, A0, sizeof A); memcpy(Bp, B0, sizeof B); memcpy(Am, A0, sizeof A); memcpy(Bm, B0, sizeof B);
    if (i < 9) { Ap[i] += h; Am[i] -= h; } else { Bp[i - 9] += h; Bm[i - 9] -= h; }
    double fd = (f(Ap, Bp) - f(Am, Bm)) / (2 * h), ad = i < 9 ? dA[i] : dB[i - 9];
    if (fabs(fd - ad) > 1e-6 * (1 + fabs(fd))) { bad++; printf("%d ad %g fd %g\n", i, ad, fd); }
  }
  printf("%s\n", bad ? "MISMATCH" : "OK");
  return bad;
}
"""


def test_gesv_with_pivots_and_info_in_globals(tmp_path):
    """ipiv and info need no shadow: static globals work (gradients against finite differences)."""
    write(tmp_path, "gs.c", GESV_GLOBAL_PIVOTS)
    proc = build(tmp_path, ["gs.c", "-o", "gs", "-llapack", "-lopenblas", "-lm"])
    assert proc.returncode == 0, proc.stderr
    assert run([tmp_path / "gs"], tmp_path).stdout.strip() == "OK"
