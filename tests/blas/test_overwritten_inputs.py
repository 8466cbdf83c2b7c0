"""Which inputs a BLAS call keeps on the tape, end to end through `enzyme-build cc`: the
engine tells each call site's augment rule which arrays may be overwritten before the reverse
sweep and which have a shadow (custom/convention.py); the rule copies an input only when
both an adjoint that reads it exists and it may be overwritten (docs/blas.md, "Tape").

Per case, in double and single precision: the masks the call gets in the emitted IR (read
from ENZYME_BUILD_KEEP's ad-output.ll) and the copies they mean by the table (what
test_tape_copies.py checks the generated rules do), and the gradient against central finite
differences, run against reference BLAS and OpenBLAS:

* gemm with A and alpha constant, A and B overwritten after it: A is copied, B is not;
* gemm / gemv / dot / Fortran gemm whose inputs are never written again, and gemm on a heap
  copy the function frees at the end: nothing is copied;
* gemv / dot whose inputs are overwritten after the call: copied; gemm with an active beta:
  C's old value is copied (beta's adjoint reads it); axpy whose x is its y (the rule sees the
  same pointer and copies x for alpha's adjoint);
* split mode (__enzyme_augmentfwd / __enzyme_reverse): inputs the caller overwrites between
  the two calls are copied; with enzyme_not_overwritten (restrict pointers) they are not;
  an input the function itself overwrites is copied despite enzyme_not_overwritten.
"""
from __future__ import annotations

import os
import re
import subprocess

import pytest

from blas_helpers import ENZYME_BUILD, OPENBLAS_DIR, REFERENCE_DIR, REFERENCE_LAPACK_DIR, write
from enzyme_build.blas.generate import _cache_letters, _params
from enzyme_build.blas.table import BY_FAMILY

pytestmark = pytest.mark.skipif(not os.path.exists(os.path.join(REFERENCE_DIR, "libblas.so.3"))
                                or not os.path.exists(os.path.join(OPENBLAS_DIR, "libopenblas.so")),
                                reason="needs libblas-dev, liblapack-dev and libopenblas-dev")

HEAD = r"""
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cblas.h>
extern int enzyme_dup, enzyme_const, enzyme_not_overwritten;
double __enzyme_autodiff(void *, ...);
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);
enum { M = 3, N = 4, K = 2, NA = 16 };
static int bad;
static double init(int k, int i) { return 0.4 * sin(1.7 * i + k) + 0.1 * k; }
"""

# per precision ($T, $p): the functions, a finite-difference check and the cases
BODY = r"""
void $pgemm_(const char *, const char *, const int *, const int *, const int *, const $T *, const $T *,
             const int *, const $T *, const int *, const $T *, $T *, const int *);
static double sq_$p(const $T *y, int n) { double s = 0; for (int i = 0; i < n; i++) s += (double)y[i] * y[i] + 0.3 * y[i]; return s; }
/* A (M x K) and alpha constant; A and B overwritten after the call */
double gemm_aconst_$p($T *A, $T *B, $T *C) {
  cblas_$pgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, M, N, K, 0.9f, A, M, B, K, 0.5f, C, M);
  double s = sq_$p(C, M * N);
  for (int i = 0; i < M * K; i++) A[i] = -3;
  for (int i = 0; i < K * N; i++) B[i] = 7;
  return s;
}
double gemm_keep_$p($T *A, $T *B, $T *C) {
  cblas_$pgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 0.9f, A, K, B, K, 0.5f, C, N);
  return sq_$p(C, M * N);
}
double gemm_fortran_$p($T *A, $T *B, $T *C) {
  int m = M, n = N, k = K; $T al = 0.9f, be = 0.5f;
  $pgemm_("T", "N", &m, &n, &k, &al, A, &k, B, &k, &be, C, &m);
  return sq_$p(C, M * N);
}
double gemm_own_$p($T *A0, $T *B, $T *C) {   /* a heap copy freed at the end */
  $T *A = malloc(M * K * sizeof($T));
  memcpy(A, A0, M * K * sizeof($T));
  cblas_$pgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, M, N, K, 0.9f, A, M, B, K, 0.5f, C, M);
  double s = sq_$p(C, M * N);
  free(A);
  return s;
}
static double beta_$p = 0.5;
double gemm_beta_$p($T *A, $T *B, $T *C, double beta) {   /* beta active: C's old value is read */
  cblas_$pgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, M, N, K, 0.9f, A, M, B, K, ($T)beta, C, M);
  return sq_$p(C, M * N);
}
static double gemm_beta3_$p($T *A, $T *B, $T *C) { return gemm_beta_$p(A, B, C, beta_$p); }
double gemv_keep_$p($T *A, $T *x, $T *y) {
  cblas_$pgemv(CblasRowMajor, CblasTrans, N, M, 1.5f, A, M, x, 1, 0.0f, y, 1);
  return sq_$p(y, M);
}
double gemv_ow_$p($T *A, $T *x, $T *y) {
  cblas_$pgemv(CblasColMajor, CblasNoTrans, M, N, 1.5f, A, M, x, -1, 0.0f, y, 1);
  double s = sq_$p(y, M);
  A[1] = 4; x[0] = 9;
  return s;
}
double dot_keep_$p($T *x, $T *y, $T *unused) { (void)unused; double d = cblas_$pdot(N, x, 1, y, 1); return d * d + d; }
double dot_ow_$p($T *x, $T *y, $T *unused) {
  (void)unused;
  double d = cblas_$pdot(N, x, 2, y, -1);
  x[0] = 1; y[1] = 2;
  return d * d + d;
}
/* x and y the very same array (elementwise, so BLAS gets it right): alpha's adjoint needs the
   old values, which only the rule can tell are overwritten -- by the call itself */
double axpy_self_$p($T *y, double a) {
  cblas_$paxpy(N, ($T)a, y, 1, y, 1);
  return sq_$p(y, N);
}
/* split mode: y = A x, *out = |y|^2 + ...; restrict: the arrays do not overlap */
void piece_$p(const $T *restrict A, const $T *restrict x, $T *restrict y, double *restrict out) {
  cblas_$pgemv(CblasColMajor, CblasNoTrans, M, N, 1.0f, A, M, x, 1, 0.0f, y, 1);
  *out = sq_$p(y, M);
}
void piece_kept_$p(const $T *restrict A, const $T *restrict x, $T *restrict y, double *restrict out) {
  cblas_$pgemv(CblasColMajor, CblasNoTrans, M, N, 1.0f, A, M, x, 1, 0.0f, y, 1);
  *out = sq_$p(y, M);
}
void piece_ow_$p($T *restrict A, const $T *restrict x, $T *restrict y, double *restrict out) {
  cblas_$pgemv(CblasColMajor, CblasNoTrans, M, N, 1.0f, A, M, x, 1, 0.0f, y, 1);
  *out = sq_$p(y, M);
  for (int i = 0; i < M * N; i++) A[i] = 0;   /* overwritten by the function itself */
}
static double piece3_$p($T *A, $T *x, $T *y) { double out; piece_$p(A, x, y, &out); return out; }

typedef double (*loss3_$p)($T *, $T *, $T *);
/* central differences of f at x0, each element of the arrays with a gradient g[a] */
static void check_$p(const char *what, loss3_$p f, $T *const *x0, $T *const *g, double h, double tol) {
  for (int a = 0; a < 3; a++) {
    if (!g[a]) continue;
    for (int i = 0; i < NA; i++) {
      double r[2];
      for (int s = 0; s < 2; s++) {
        $T c[3][NA];
        for (int b = 0; b < 3; b++) memcpy(c[b], x0[b], sizeof c[b]);
        c[a][i] += s ? -($T)h : ($T)h;
        r[s] = f(c[0], c[1], c[2]);
      }
      double fd = (r[0] - r[1]) / (2 * h);
      if (fabs(fd - g[a][i]) > tol * (1 + fabs(fd))) {
        bad++;
        printf("FAIL %s d%d[%d]: ad %.8g fd %.8g\n", what, a, i, (double)g[a][i], fd);
      }
    }
  }
}

static void cases_$p(double h, double tol) {
  $T x0[3][NA], x[3][NA], d[3][NA];
  $T *X0[3] = {x0[0], x0[1], x0[2]}, *D[3] = {d[0], d[1], d[2]};
  for (int a = 0; a < 3; a++) for (int i = 0; i < NA; i++) x0[a][i] = ($T)init(a, i);
#define FRESH() do { memcpy(x, x0, sizeof x); memset(d, 0, sizeof d); } while (0)
  FRESH();
  __enzyme_autodiff((void *)gemm_aconst_$p, enzyme_const, x[0], enzyme_dup, x[1], d[1], enzyme_dup, x[2], d[2]);
  { $T *g[3] = {NULL, d[1], d[2]}; check_$p("$p gemm_aconst", gemm_aconst_$p, X0, g, h, tol); }
#define ALL_ACTIVE(f) do { FRESH(); \
    __enzyme_autodiff((void *)f, enzyme_dup, x[0], d[0], enzyme_dup, x[1], d[1], enzyme_dup, x[2], d[2]); \
    check_$p(#f, f, X0, D, h, tol); } while (0)
  ALL_ACTIVE(gemm_keep_$p);
  ALL_ACTIVE(gemm_fortran_$p);
  ALL_ACTIVE(gemm_own_$p);
  ALL_ACTIVE(gemv_keep_$p);
  ALL_ACTIVE(gemv_ow_$p);
#define TWO_ACTIVE(f) do { FRESH(); \
    __enzyme_autodiff((void *)f, enzyme_dup, x[0], d[0], enzyme_dup, x[1], d[1], enzyme_const, x[2]); \
    $T *g[3] = {d[0], d[1], NULL}; check_$p(#f, f, X0, g, h, tol); } while (0)
  TWO_ACTIVE(dot_keep_$p);
  TWO_ACTIVE(dot_ow_$p);
  FRESH();
  double dbeta = __enzyme_autodiff((void *)gemm_beta_$p, enzyme_dup, x[0], d[0], enzyme_dup, x[1], d[1],
                                   enzyme_dup, x[2], d[2], beta_$p);
  check_$p("$p gemm_beta", gemm_beta3_$p, X0, D, h, tol);
  {
    double fd;
    $T c[3][NA];
    memcpy(c, x0, sizeof c); beta_$p = 0.5 + h; double fp = gemm_beta3_$p(c[0], c[1], c[2]);
    memcpy(c, x0, sizeof c); beta_$p = 0.5 - h; double fm = gemm_beta3_$p(c[0], c[1], c[2]);
    beta_$p = 0.5;
    fd = (fp - fm) / (2 * h);
    if (fabs(fd - dbeta) > tol * (1 + fabs(fd))) { bad++; printf("FAIL $p gemm_beta dbeta: ad %.8g fd %.8g\n", dbeta, fd); }
  }
  FRESH();
  double dalpha = __enzyme_autodiff((void *)axpy_self_$p, enzyme_dup, x[0], d[0], 0.75);
  for (int i = -1; i < N; i++) {   /* alpha, then each element */
    $T c[NA];
    double r[2];
    for (int s = 0; s < 2; s++) {
      memcpy(c, x0[0], sizeof c);
      if (i >= 0) c[i] += s ? -($T)h : ($T)h;
      r[s] = axpy_self_$p(c, i < 0 ? 0.75 + (s ? -h : h) : 0.75);
    }
    double fd = (r[0] - r[1]) / (2 * h), ad = i < 0 ? dalpha : d[0][i];
    if (fabs(fd - ad) > tol * (1 + fabs(fd))) { bad++; printf("FAIL $p axpy_self %d: ad %.8g fd %.8g\n", i, ad, fd); }
  }
  /* split mode: the caller overwrites A and x between the two calls (they are not vouched for) */
  double out, dout;
  FRESH(); dout = 1;
  void *t = __enzyme_augmentfwd((void *)piece_$p, enzyme_dup, x[0], d[0], enzyme_dup, x[1], d[1],
                                enzyme_dup, x[2], d[2], enzyme_dup, &out, &dout);
  for (int i = 0; i < NA; i++) x[0][i] = x[1][i] = 50;
  __enzyme_reverse((void *)piece_$p, enzyme_dup, x[0], d[0], enzyme_dup, x[1], d[1], enzyme_dup, x[2], d[2],
                   enzyme_dup, &out, &dout, t);
  check_$p("$p split overwritten by the caller", piece3_$p, X0, D, h, tol);
  /* enzyme_not_overwritten: the caller keeps A and x as they are */
  FRESH(); dout = 1;
  t = __enzyme_augmentfwd((void *)piece_kept_$p, enzyme_not_overwritten, enzyme_dup, x[0], d[0],
                          enzyme_not_overwritten, enzyme_dup, x[1], d[1], enzyme_dup, x[2], d[2], enzyme_dup, &out, &dout);
  __enzyme_reverse((void *)piece_kept_$p, enzyme_not_overwritten, enzyme_dup, x[0], d[0],
                   enzyme_not_overwritten, enzyme_dup, x[1], d[1], enzyme_dup, x[2], d[2], enzyme_dup, &out, &dout, t);
  check_$p("$p split kept", piece3_$p, X0, D, h, tol);
  /* the function itself overwrites A after the gemv: copied despite enzyme_not_overwritten */
  FRESH(); dout = 1;
  t = __enzyme_augmentfwd((void *)piece_ow_$p, enzyme_not_overwritten, enzyme_dup, x[0], d[0],
                          enzyme_not_overwritten, enzyme_dup, x[1], d[1], enzyme_dup, x[2], d[2], enzyme_dup, &out, &dout);
  __enzyme_reverse((void *)piece_ow_$p, enzyme_not_overwritten, enzyme_dup, x[0], d[0],
                   enzyme_not_overwritten, enzyme_dup, x[1], d[1], enzyme_dup, x[2], d[2], enzyme_dup, &out, &dout, t);
  check_$p("$p split overwritten by the function", piece3_$p, X0, D, h, tol);
#undef FRESH
#undef ALL_ACTIVE
#undef TWO_ACTIVE
}
"""

PRECISIONS = {"d": ("double", "1e-6", "1e-6"), "s": ("float", "1e-2", "1e-3")}

# function -> (routine, the inputs copied to the tape at its call)
EXPECTED = {
    "gemm_aconst": ("gemm", {"A"}),
    "gemm_keep": ("gemm", set()),
    "gemm_fortran": ("gemm", set()),
    "gemm_own": ("gemm", set()),
    "gemm_beta": ("gemm", {"C"}),
    "gemv_keep": ("gemv", set()),
    "gemv_ow": ("gemv", {"A", "x"}),
    "dot_keep": ("dot", set()),
    "dot_ow": ("dot", {"x", "y"}),
    "piece": ("gemv", {"A", "x"}),
    "piece_kept": ("gemv", set()),
    "piece_ow": ("gemv", {"A"}),
}


def program() -> str:
    out = [HEAD]
    for p, (T, _, _) in PRECISIONS.items():
        out.append(BODY.replace("$T", T).replace("$p", p))
    out.append("int main(void) {")
    out += [f"  cases_{p}({h}, {tol});" for p, (_, h, tol) in PRECISIONS.items()]
    out.append('  printf("%s %d\\n", bad ? "MISMATCH" : "OK", bad);\n  return bad != 0;\n}')
    return "\n".join(out)


def copies(family: str, over: int, shad: int) -> set[str]:
    """The inputs the augment rule copies for these masks (table.py, generate.py): an adjoint
    that reads the input exists, and the input may be overwritten or is an array the routine
    itself overwrites. (The value conditions `cond` hold in these cases.)"""
    r = BY_FAMILY[family]
    names = [n for n, _ in _params(r)]
    written = {n for n, c in zip(names, _cache_letters(r)) if c == "w"}
    out = set()
    for c in r.caches:
        need = re.sub(r"\bd_(\w+)\b", lambda m: str(bool(shad >> names.index(m.group(1)) & 1)), c.need)
        need = need.replace("&&", " and ").replace("||", " or ")
        if eval(need) and ((c.when == "before" and c.array in written) or over >> names.index(c.array) & 1):
            out.add(c.name)
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    work = tmp_path_factory.mktemp("overwritten")
    write(work, "ow.c", program())
    keep = work / "keep"
    proc = subprocess.run([ENZYME_BUILD, "cc", "-O2", "ow.c", "-o", "ow", f"-L{REFERENCE_DIR}", "-lblas", "-lm"],
                          cwd=work, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, ENZYME_BUILD_KEEP=str(keep)))
    return work, proc, keep


@pytest.mark.parametrize("library", ["reference", "openblas"])
def test_gradients_match_finite_differences(built, library):
    work, proc, _ = built
    assert proc.returncode == 0, proc.stderr
    env = dict(os.environ, LD_LIBRARY_PATH=f"{REFERENCE_DIR}:{REFERENCE_LAPACK_DIR}" if library == "reference"
               else OPENBLAS_DIR)
    run = subprocess.run([str(work / "ow")], capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0 and run.stdout.strip().endswith("OK 0"), run.stdout[-3000:] + run.stderr[-2000:]


@pytest.mark.parametrize("p", sorted(PRECISIONS))
@pytest.mark.parametrize("function", sorted(EXPECTED))
def test_inputs_copied_at_each_call(built, function, p):
    _, proc, keep = built
    assert proc.returncode == 0, proc.stderr
    (out,) = list(keep.glob("*.ad/ad-output.ll"))
    text = out.read_text()
    family, expected = EXPECTED[function]
    derived = "augmented" if function.startswith("piece") else "diffe"
    m = re.search(rf"^define [^\n]*@{derived}_{function}_{p}[.(][^\n]*\{{\n(.*?)^\}}", text, re.M | re.S)
    assert m, f"{derived}_{function}_{p}"
    calls = re.findall(rf"call \w+ @__enzyme_blas_{p}{family}_aug\([^\n]*, i64 (\d+), i64 (\d+)\)", m.group(1))
    assert len(calls) == 1, calls
    over, shad = (int(v) for v in calls[0])
    assert copies(family, over, shad) == expected, (over, shad)
