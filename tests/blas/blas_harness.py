"""One C test program per group of BLAS families: every enum combination, both layouts,
several shapes, leading dimensions and strides, both precisions, the CBLAS and the Fortran
form; gradients (reverse mode) checked against central finite differences and tangents
(forward mode) against the gradient. The program prints one line per failing case and
`SUMMARY <family> <cases> <failures>` per family.

A case is a loss over copies of the routine's arrays: the routine's outputs (and returned
value) enter a weighted quadratic, so every input and every output element matters. The
copies are heap blocks of the loss's own, read after the call and freed at its end, so the
rules read them in place in the reverse sweep (no tape copies but the old values of arrays
a routine overwrites); test_tape_copies.py and test_overwritten_inputs.py cover the copies.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Family:
    name: str
    cfg: tuple[str, ...]            # config ints the loss reads (after abi)
    loops: str                      # C: nested loops that set the cfg ints and call CASE()
    arrays: tuple[tuple[str, str], ...]  # (name, size expression)
    cblas: str                      # C call (ret = ... for routines returning a value)
    fortran: str                    # C call of the Fortran form (column-major only)
    fproto: str                     # Fortran prototypes ($T, $p)
    init: str = ""                  # C: extra initialization (well-conditioned triangles)
    returns: bool = False


VEC = "(1 + (n - 1) * abs(inc{v}))"

LEVEL1 = [
    Family("dot", ("n", "incx", "incy"),
           "for (n = 1; n <= 5; n += 4) for (incx = -2; incx <= 2; incx++) for (incy = -1; incy <= 2; incy++) "
           "if (incx && incy) CASE();",
           (("x", "1 + (n - 1) * abs(incx)"), ("y", "1 + (n - 1) * abs(incy)")),
           "ret = cblas_$pdot(n, x, incx, y, incy);", "ret = $pdot_(&n, x, &incx, y, &incy);",
           "$T $pdot_(const int *, const $T *, const int *, const $T *, const int *);", returns=True),
    Family("axpy", ("n", "incx", "incy"),
           "for (n = 1; n <= 5; n += 4) for (incx = -2; incx <= 2; incx++) for (incy = -1; incy <= 2; incy++) "
           "if (incx && incy) CASE();",
           (("x", "1 + (n - 1) * abs(incx)"), ("y", "1 + (n - 1) * abs(incy)")),
           "cblas_$paxpy(n, alpha, x, incx, y, incy);", "$paxpy_(&n, &alpha, x, &incx, y, &incy);",
           "void $paxpy_(const int *, const $T *, const $T *, const int *, $T *, const int *);"),
    Family("scal", ("n", "incx"),
           "for (n = 1; n <= 5; n += 4) for (incx = 1; incx <= 2; incx++) CASE();",
           (("x", "1 + (n - 1) * abs(incx)"),),
           "cblas_$pscal(n, alpha, x, incx);", "$pscal_(&n, &alpha, x, &incx);",
           "void $pscal_(const int *, const $T *, $T *, const int *);"),
    Family("nrm2", ("n", "incx"),
           "for (n = 1; n <= 5; n += 4) for (incx = 1; incx <= 2; incx++) CASE();",
           (("x", "1 + (n - 1) * abs(incx)"),),
           "ret = cblas_$pnrm2(n, x, incx);", "ret = $pnrm2_(&n, x, &incx);",
           "$T $pnrm2_(const int *, const $T *, const int *);", returns=True),
    Family("asum", ("n", "incx"),
           "for (n = 1; n <= 5; n += 4) for (incx = 1; incx <= 2; incx++) CASE();",
           (("x", "1 + (n - 1) * abs(incx)"),),
           "ret = cblas_$pasum(n, x, incx);", "ret = $pasum_(&n, x, &incx);",
           "$T $pasum_(const int *, const $T *, const int *);", returns=True),
    Family("copy", ("n", "incx", "incy"),
           "for (n = 1; n <= 5; n += 4) for (incx = -2; incx <= 2; incx++) for (incy = -1; incy <= 2; incy++) "
           "if (incx && incy) CASE();",
           (("x", "1 + (n - 1) * abs(incx)"), ("y", "1 + (n - 1) * abs(incy)")),
           "cblas_$pcopy(n, x, incx, y, incy);", "$pcopy_(&n, x, &incx, y, &incy);",
           "void $pcopy_(const int *, const $T *, const int *, $T *, const int *);"),
    Family("swap", ("n", "incx", "incy"),
           "for (n = 1; n <= 5; n += 4) for (incx = -2; incx <= 2; incx++) for (incy = -1; incy <= 2; incy++) "
           "if (incx && incy) CASE();",
           (("x", "1 + (n - 1) * abs(incx)"), ("y", "1 + (n - 1) * abs(incy)")),
           "cblas_$pswap(n, x, incx, y, incy);", "$pswap_(&n, x, &incx, y, &incy);",
           "void $pswap_(const int *, $T *, const int *, $T *, const int *);"),
]

# matrices: MLD(lay, rows, cols) is the tight leading dimension plus pad, MSZ its storage
LEVEL2 = [
    Family("gemv", ("lay", "tr", "m", "n", "lda", "incx", "incy"),
           "for (lay = 101; lay <= 102; lay++) for (tr = 111; tr <= 113; tr++) for (int s = 0; s < 2; s++) "
           "for (incx = -1; incx <= 2; incx += 3) { m = s ? 4 : 1; n = s ? 3 : 2; lda = MLD(lay, m, n); "
           "incy = s ? -2 : 1; CASE(); }",
           (("A", "MSZ(lay, m, n, lda)"), ("x", "1 + ((tr == 111 ? n : m) - 1) * abs(incx)"),
            ("y", "1 + ((tr == 111 ? m : n) - 1) * abs(incy)")),
           "cblas_$pgemv(lay, tr, m, n, alpha, A, lda, x, incx, beta, y, incy);",
           "{ char t = TC(tr); $pgemv_(&t, &m, &n, &alpha, A, &lda, x, &incx, &beta, y, &incy); }",
           "void $pgemv_(const char *, const int *, const int *, const $T *, const $T *, const int *, "
           "const $T *, const int *, const $T *, $T *, const int *);"),
    Family("ger", ("lay", "m", "n", "lda", "incx", "incy"),
           "for (lay = 101; lay <= 102; lay++) for (int s = 0; s < 2; s++) for (incx = -1; incx <= 2; incx += 3) "
           "{ m = s ? 4 : 2; n = s ? 3 : 1; lda = MLD(lay, m, n); incy = s ? 1 : -2; CASE(); }",
           (("x", "1 + (m - 1) * abs(incx)"), ("y", "1 + (n - 1) * abs(incy)"), ("A", "MSZ(lay, m, n, lda)")),
           "cblas_$pger(lay, m, n, alpha, x, incx, y, incy, A, lda);",
           "$pger_(&m, &n, &alpha, x, &incx, y, &incy, A, &lda);",
           "void $pger_(const int *, const int *, const $T *, const $T *, const int *, const $T *, "
           "const int *, $T *, const int *);"),
    Family("symv", ("lay", "up", "n", "lda", "incx", "incy"),
           "for (lay = 101; lay <= 102; lay++) for (up = 121; up <= 122; up++) for (int s = 0; s < 2; s++) "
           "{ n = s ? 4 : 2; lda = MLD(lay, n, n); incx = s ? -1 : 2; incy = s ? 2 : -1; CASE(); }",
           (("A", "MSZ(lay, n, n, lda)"), ("x", "1 + (n - 1) * abs(incx)"), ("y", "1 + (n - 1) * abs(incy)")),
           "cblas_$psymv(lay, up, n, alpha, A, lda, x, incx, beta, y, incy);",
           "{ char u = UC(up); $psymv_(&u, &n, &alpha, A, &lda, x, &incx, &beta, y, &incy); }",
           "void $psymv_(const char *, const int *, const $T *, const $T *, const int *, const $T *, "
           "const int *, const $T *, $T *, const int *);"),
    Family("trmv", ("lay", "up", "tr", "dg", "n", "lda", "incx"),
           "for (lay = 101; lay <= 102; lay++) for (up = 121; up <= 122; up++) for (tr = 111; tr <= 112; tr++) "
           "for (dg = 131; dg <= 132; dg++) for (int s = 0; s < 2; s++) "
           "{ n = s ? 4 : 2; lda = MLD(lay, n, n); incx = s ? -2 : 1; CASE(); }",
           (("A", "MSZ(lay, n, n, lda)"), ("x", "1 + (n - 1) * abs(incx)")),
           "cblas_$ptrmv(lay, up, tr, dg, n, A, lda, x, incx);",
           "{ char u = UC(up), t = TC(tr), d = DC(dg); $ptrmv_(&u, &t, &d, &n, A, &lda, x, &incx); }",
           "void $ptrmv_(const char *, const char *, const char *, const int *, const $T *, const int *, "
           "$T *, const int *);"),
    Family("trsv", ("lay", "up", "tr", "dg", "n", "lda", "incx"),
           "for (lay = 101; lay <= 102; lay++) for (up = 121; up <= 122; up++) for (tr = 111; tr <= 112; tr++) "
           "for (dg = 131; dg <= 132; dg++) for (int s = 0; s < 2; s++) "
           "{ n = s ? 4 : 2; lda = MLD(lay, n, n); incx = s ? -2 : 1; CASE(); }",
           (("A", "MSZ(lay, n, n, lda)"), ("x", "1 + (n - 1) * abs(incx)")),
           "cblas_$ptrsv(lay, up, tr, dg, n, A, lda, x, incx);",
           "{ char u = UC(up), t = TC(tr), d = DC(dg); $ptrsv_(&u, &t, &d, &n, A, &lda, x, &incx); }",
           "void $ptrsv_(const char *, const char *, const char *, const int *, const $T *, const int *, "
           "$T *, const int *);",
           init="for (int i = 0; i < n; i++) X0[IDX(lay, lda, i, i)] += 3;"),
]

LEVEL3 = [
    Family("gemm", ("lay", "ta", "tb", "m", "n", "k", "lda", "ldb", "ldc"),
           "for (lay = 101; lay <= 102; lay++) for (ta = 111; ta <= 113; ta++) for (tb = 111; tb <= 112; tb++) "
           "for (int s = 0; s < 2; s++) { m = s ? 3 : 1; n = s ? 2 : 3; k = s ? 4 : 2; "
           "lda = ta == 111 ? MLD(lay, m, k) : MLD(lay, k, m); ldb = tb == 111 ? MLD(lay, k, n) : MLD(lay, n, k); "
           "ldc = MLD(lay, m, n); CASE(); }",
           (("A", "ta == 111 ? MSZ(lay, m, k, lda) : MSZ(lay, k, m, lda)"),
            ("B", "tb == 111 ? MSZ(lay, k, n, ldb) : MSZ(lay, n, k, ldb)"), ("C", "MSZ(lay, m, n, ldc)")),
           "cblas_$pgemm(lay, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);",
           "{ char a = TC(ta), b = TC(tb); $pgemm_(&a, &b, &m, &n, &k, &alpha, A, &lda, B, &ldb, &beta, C, &ldc); }",
           "void $pgemm_(const char *, const char *, const int *, const int *, const int *, const $T *, "
           "const $T *, const int *, const $T *, const int *, const $T *, $T *, const int *);"),
    Family("symm", ("lay", "sd", "up", "m", "n", "lda", "ldb", "ldc"),
           "for (lay = 101; lay <= 102; lay++) for (sd = 141; sd <= 142; sd++) for (up = 121; up <= 122; up++) "
           "for (int s = 0; s < 2; s++) { m = s ? 3 : 2; n = s ? 2 : 3; "
           "lda = sd == 141 ? MLD(lay, m, m) : MLD(lay, n, n); ldb = MLD(lay, m, n); ldc = MLD(lay, m, n); CASE(); }",
           (("A", "sd == 141 ? MSZ(lay, m, m, lda) : MSZ(lay, n, n, lda)"), ("B", "MSZ(lay, m, n, ldb)"),
            ("C", "MSZ(lay, m, n, ldc)")),
           "cblas_$psymm(lay, sd, up, m, n, alpha, A, lda, B, ldb, beta, C, ldc);",
           "{ char d = SC(sd), u = UC(up); $psymm_(&d, &u, &m, &n, &alpha, A, &lda, B, &ldb, &beta, C, &ldc); }",
           "void $psymm_(const char *, const char *, const int *, const int *, const $T *, const $T *, "
           "const int *, const $T *, const int *, const $T *, $T *, const int *);"),
    Family("syrk", ("lay", "up", "tr", "n", "k", "lda", "ldc"),
           "for (lay = 101; lay <= 102; lay++) for (up = 121; up <= 122; up++) for (tr = 111; tr <= 112; tr++) "
           "for (int s = 0; s < 2; s++) { n = s ? 3 : 2; k = s ? 2 : 4; "
           "lda = tr == 111 ? MLD(lay, n, k) : MLD(lay, k, n); ldc = MLD(lay, n, n); CASE(); }",
           (("A", "tr == 111 ? MSZ(lay, n, k, lda) : MSZ(lay, k, n, lda)"), ("C", "MSZ(lay, n, n, ldc)")),
           "cblas_$psyrk(lay, up, tr, n, k, alpha, A, lda, beta, C, ldc);",
           "{ char u = UC(up), t = TC(tr); $psyrk_(&u, &t, &n, &k, &alpha, A, &lda, &beta, C, &ldc); }",
           "void $psyrk_(const char *, const char *, const int *, const int *, const $T *, const $T *, "
           "const int *, const $T *, $T *, const int *);"),
    Family("trmm", ("lay", "sd", "up", "tr", "dg", "m", "n", "lda", "ldb"),
           "for (lay = 101; lay <= 102; lay++) for (sd = 141; sd <= 142; sd++) for (up = 121; up <= 122; up++) "
           "for (tr = 111; tr <= 112; tr++) for (dg = 131; dg <= 132; dg++) "
           "{ m = 3; n = 2; lda = sd == 141 ? MLD(lay, m, m) : MLD(lay, n, n); ldb = MLD(lay, m, n); CASE(); }",
           (("A", "sd == 141 ? MSZ(lay, m, m, lda) : MSZ(lay, n, n, lda)"), ("B", "MSZ(lay, m, n, ldb)")),
           "cblas_$ptrmm(lay, sd, up, tr, dg, m, n, alpha, A, lda, B, ldb);",
           "{ char d = SC(sd), u = UC(up), t = TC(tr), g = DC(dg); "
           "$ptrmm_(&d, &u, &t, &g, &m, &n, &alpha, A, &lda, B, &ldb); }",
           "void $ptrmm_(const char *, const char *, const char *, const char *, const int *, const int *, "
           "const $T *, const $T *, const int *, $T *, const int *);"),
    Family("trsm", ("lay", "sd", "up", "tr", "dg", "m", "n", "lda", "ldb"),
           "for (lay = 101; lay <= 102; lay++) for (sd = 141; sd <= 142; sd++) for (up = 121; up <= 122; up++) "
           "for (tr = 111; tr <= 112; tr++) for (dg = 131; dg <= 132; dg++) "
           "{ m = 3; n = 2; lda = sd == 141 ? MLD(lay, m, m) : MLD(lay, n, n); ldb = MLD(lay, m, n); CASE(); }",
           (("A", "sd == 141 ? MSZ(lay, m, m, lda) : MSZ(lay, n, n, lda)"), ("B", "MSZ(lay, m, n, ldb)")),
           "cblas_$ptrsm(lay, sd, up, tr, dg, m, n, alpha, A, lda, B, ldb);",
           "{ char d = SC(sd), u = UC(up), t = TC(tr), g = DC(dg); "
           "$ptrsm_(&d, &u, &t, &g, &m, &n, &alpha, A, &lda, B, &ldb); }",
           "void $ptrsm_(const char *, const char *, const char *, const char *, const int *, const int *, "
           "const $T *, const $T *, const int *, $T *, const int *);",
           init="for (int i = 0; i < (sd == 141 ? m : n); i++) X0[IDX(lay, lda, i, i)] += 3;"),
]

# LAPACK (Fortran only, column-major): the same call in both abi slots
_POTRF = "{ int info; char u = UC(up); $ppotrf_(&u, &n, A, &lda, &info, 1); }"
_POTRS = "{ int info; char u = UC(up); $ppotrs_(&u, &n, &nrhs, A, &lda, B, &ldb, &info, 1); }"
_GESV = "{ int info; int *ipiv = malloc(n * sizeof(int)); $pgesv_(&n, &nrhs, A, &lda, ipiv, B, &ldb, &info); free(ipiv); }"
LAPACK = [
    Family("potrf", ("up", "n", "lda"),
           "for (up = 121; up <= 122; up++) for (n = 1; n <= 4; n += 3) { lda = n + 1; CASE(); }",
           (("A", "lda * n"),), _POTRF, _POTRF,
           "void $ppotrf_(const char *, const int *, $T *, const int *, int *, size_t);",
           init="for (int i = 0; i < n; i++) for (int j = 0; j < n; j++) "
                "X0[i + j * lda] = (i == j ? n + 1.0 : 0.3 * cos(i + j));"),
    Family("potrs", ("up", "n", "nrhs", "lda", "ldb"),
           "for (up = 121; up <= 122; up++) for (n = 1; n <= 4; n += 3) { nrhs = n == 1 ? 3 : 2; "
           "lda = n + 1; ldb = n + 2; CASE(); }",
           (("A", "lda * n"), ("B", "ldb * nrhs")), _POTRS, _POTRS,
           "void $ppotrs_(const char *, const int *, const int *, const $T *, const int *, $T *, const int *, "
           "int *, size_t);",
           init="for (int i = 0; i < n; i++) X0[i + i * lda] += 3;"),
    Family("gesv", ("n", "nrhs", "lda", "ldb"),
           "for (n = 1; n <= 4; n += 3) { nrhs = n == 1 ? 3 : 2; lda = n + 1; ldb = n; CASE(); }",
           (("A", "lda * n"), ("B", "ldb * nrhs")), _GESV, _GESV,
           "void $pgesv_(const int *, const int *, $T *, const int *, int *, $T *, const int *, int *);",
           init="for (int i = 0; i < n; i++) X0[i + i * lda] += (i % 2 ? -3 : 3);"),
]

GROUPS = {"level1": LEVEL1, "level2": LEVEL2, "level3": LEVEL3, "lapack": LAPACK}
LINK = {"lapack": ["-llapack"]}

PRELUDE = r"""
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cblas.h>
extern int enzyme_dup, enzyme_const;
typedef struct { double a, b; } d2;
typedef struct { double d[2]; } v2;
typedef struct { double d[4]; } v4;
d2 __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
v2 __enzyme_fwddiff_w2(void *, ...);   /* the engine knows an entry point by the name it contains */
v4 __enzyme_fwddiff_w4(void *, ...);
extern int enzyme_width;
#define MLD(lay, r, c) (((lay) == 102 ? (r) : (c)) + 1)
#define MSZ(lay, r, c, ld) ((lay) == 102 ? (ld) * (c) : (ld) * (r))
#define IDX(lay, ld, i, j) ((lay) == 102 ? (i) + (j) * (ld) : (i) * (ld) + (j))
#define TC(t) ((t) == 111 ? 'N' : (t) == 112 ? 'T' : 'C')
#define UC(u) ((u) == 121 ? 'U' : 'L')
#define DC(d) ((d) == 131 ? 'N' : 'U')
#define SC(s) ((s) == 141 ? 'L' : 'R')
static int cases, failures;
static double wgt(int k, int i) { return sin(1.3 * i + 0.7 * k) + 0.2; }
static double init_val(int k, int i) { return 0.5 * cos(0.9 * i + 1.7 * k) + 0.1 * k; }
"""

FAMILY_TEMPLATE = r"""
$FPROTO
static double loss_$p_$F(const $T *X0, const $T *X1, const $T *X2, double alpha_d, double beta_d, const int *cfg) {
    int abi = cfg[0]; $CFGREAD
    $T alpha = ($T)alpha_d, beta = ($T)beta_d;
    (void)beta; (void)alpha;
    $ARRAYS
    double ret = 0;
    if (abi == 0) { $CBLAS } else { $FORTRAN }
    double s = $RETTERM;
    $SUMS
    $FREES
    return s;
}
static void check_$p_$F(int abi, $CFGPARAMS) {
    int cfg[16] = {abi, $CFGLIST};
    $SIZES
    int sz[3] = {$SZLIST};
    $T *X[3], *D[3], *V[3];
    for (int a = 0; a < 3; a++) {
        X[a] = calloc(sz[a], sizeof($T)); D[a] = calloc(sz[a], sizeof($T)); V[a] = calloc(sz[a], sizeof($T));
        for (int i = 0; i < sz[a]; i++) { X[a][i] = ($T)init_val(a, i); V[a][i] = ($T)cos(2.1 * i + a); }
    }
    $T *X0 = X[0]; (void)X0;
    $INIT
    double alpha = 0.7, beta = -0.4;
    d2 g = __enzyme_autodiff((void *)loss_$p_$F, enzyme_dup, X[0], D[0], enzyme_dup, X[1], D[1],
                             enzyme_dup, X[2], D[2], alpha, beta, enzyme_const, cfg);
    double h = $H, tol = $TOL, dot = g.a * 0.3 + g.b * -0.6;
    int bad = 0;
    for (int a = 0; a < 3; a++)
        for (int i = 0; i < sz[a]; i++) {
            $T x0 = X[a][i];
            X[a][i] = x0 + ($T)h; double fp = loss_$p_$F(X[0], X[1], X[2], alpha, beta, cfg);
            X[a][i] = x0 - ($T)h; double fm = loss_$p_$F(X[0], X[1], X[2], alpha, beta, cfg);
            X[a][i] = x0;
            double fd = (fp - fm) / (((double)(x0 + ($T)h)) - ((double)(x0 - ($T)h)));
            dot += (double)D[a][i] * V[a][i];
            if (fabs(fd - D[a][i]) > tol * (1 + fabs(fd))) {
                if (bad++ < 3) printf("FAIL $p$F abi=%d cfg=%s array %d elem %d: ad %.8g fd %.8g\n", abi, "$CFGFMT", a, i, (double)D[a][i], fd);
            }
        }
    double fa = (loss_$p_$F(X[0], X[1], X[2], alpha + h, beta, cfg) - loss_$p_$F(X[0], X[1], X[2], alpha - h, beta, cfg)) / (2 * h);
    double fb = (loss_$p_$F(X[0], X[1], X[2], alpha, beta + h, cfg) - loss_$p_$F(X[0], X[1], X[2], alpha, beta - h, cfg)) / (2 * h);
    if (fabs(fa - g.a) > tol * (1 + fabs(fa)) || fabs(fb - g.b) > tol * (1 + fabs(fb))) {
        if (bad++ < 3) printf("FAIL $p$F abi=%d alpha/beta: ad %.8g %.8g fd %.8g %.8g\n", abi, g.a, g.b, fa, fb);
    }
    double tan = __enzyme_fwddiff((void *)loss_$p_$F, enzyme_dup, X[0], V[0], enzyme_dup, X[1], V[1],
                                  enzyme_dup, X[2], V[2], alpha, 0.3, beta, -0.6, enzyme_const, cfg);
    if (fabs(tan - dot) > tol * (1 + fabs(dot))) {
        if (bad++ < 3) printf("FAIL $p$F abi=%d forward: tangent %.8g gradient.v %.8g\n", abi, tan, dot);
    }
    cases++;
    if (bad) failures++;
    for (int a = 0; a < 3; a++) { free(X[a]); free(D[a]); free(V[a]); }
}
"""

# runs one check function (check_ or variants_) over every case of the family
DRIVER_TEMPLATE = r"""
static void family$KIND_$p_$F(void) {
    int $CFGDECL;
    int before = failures, n0 = cases;
    for (int abi = 0; abi < 2; abi++) {
#define CASE() do { if (abi == 0 || $COLMAJOR) $CHECK_$p_$F(abi, $CFGLIST); } while (0)
        $LOOPS
#undef CASE
    }
    printf("SUMMARY $p$F$KIND %d %d\n", cases - n0, failures - before);
}
"""

# Constant arrays and vector mode (both precisions; single with PRECISION's wider step and
# tolerance): per case, each of the routine's arrays
# in turn passed enzyme_const (its copy in the loss is never-active memory, so the rule gets
# a null shadow): the others' gradients against finite differences, its own shadow left
# zero, the forward tangent against the gradient; then enzyme_width 2 and 4, every lane's
# tangent against a directional finite difference.
VARIANT_TEMPLATE = r"""
static double dirfd_$p_$F($T **X, $T **V, double alpha, double beta, double da, double db, const int *cfg,
                          int *sz, double h) {
    $T *P[3], *M[3];
    for (int a = 0; a < 3; a++) {
        P[a] = malloc(sz[a] * sizeof($T)); M[a] = malloc(sz[a] * sizeof($T));
        for (int i = 0; i < sz[a]; i++) { P[a][i] = X[a][i] + h * V[a][i]; M[a][i] = X[a][i] - h * V[a][i]; }
    }
    double r = (loss_$p_$F(P[0], P[1], P[2], alpha + h * da, beta + h * db, cfg)
                - loss_$p_$F(M[0], M[1], M[2], alpha - h * da, beta - h * db, cfg)) / (2 * h);
    for (int a = 0; a < 3; a++) { free(P[a]); free(M[a]); }
    return r;
}
static void variants_$p_$F(int abi, $CFGPARAMS) {
    int cfg[16] = {abi, $CFGLIST};
    $SIZES
    int sz[3] = {$SZLIST};
    $T *X[3], *D[3], *V[3], *W[3][4];
    for (int a = 0; a < 3; a++) {
        X[a] = calloc(sz[a], sizeof($T)); D[a] = calloc(sz[a], sizeof($T)); V[a] = calloc(sz[a], sizeof($T));
        for (int i = 0; i < sz[a]; i++) { X[a][i] = ($T)init_val(a, i); V[a][i] = ($T)cos(2.1 * i + a); }
        for (int l = 0; l < 4; l++) {
            W[a][l] = calloc(sz[a], sizeof($T));
            for (int i = 0; i < sz[a]; i++) W[a][l][i] = ($T)sin(1.1 * i + 0.6 * l + a);
        }
    }
    $T *X0 = X[0]; (void)X0;
    $INIT
    double alpha = 0.7, beta = -0.4, h = $H, tol = $TOL;
    int bad = 0;
    for (int c = 0; c < $NARRAYS; c++) {
        for (int a = 0; a < 3; a++) memset(D[a], 0, sz[a] * sizeof($T));
        d2 g; double tan;
        if (c == 0) {
            g = __enzyme_autodiff((void *)loss_$p_$F, enzyme_const, X[0], enzyme_dup, X[1], D[1],
                                  enzyme_dup, X[2], D[2], alpha, beta, enzyme_const, cfg);
            tan = __enzyme_fwddiff((void *)loss_$p_$F, enzyme_const, X[0], enzyme_dup, X[1], V[1],
                                   enzyme_dup, X[2], V[2], alpha, 0.3, beta, -0.6, enzyme_const, cfg);
        } else if (c == 1) {
            g = __enzyme_autodiff((void *)loss_$p_$F, enzyme_dup, X[0], D[0], enzyme_const, X[1],
                                  enzyme_dup, X[2], D[2], alpha, beta, enzyme_const, cfg);
            tan = __enzyme_fwddiff((void *)loss_$p_$F, enzyme_dup, X[0], V[0], enzyme_const, X[1],
                                   enzyme_dup, X[2], V[2], alpha, 0.3, beta, -0.6, enzyme_const, cfg);
        } else {
            g = __enzyme_autodiff((void *)loss_$p_$F, enzyme_dup, X[0], D[0], enzyme_dup, X[1], D[1],
                                  enzyme_const, X[2], alpha, beta, enzyme_const, cfg);
            tan = __enzyme_fwddiff((void *)loss_$p_$F, enzyme_dup, X[0], V[0], enzyme_dup, X[1], V[1],
                                   enzyme_const, X[2], alpha, 0.3, beta, -0.6, enzyme_const, cfg);
        }
        double dot = g.a * 0.3 + g.b * -0.6;
        for (int a = 0; a < 3; a++)
            for (int i = 0; i < sz[a]; i++) {
                if (a == c) {
                    if (D[a][i] != 0 && bad++ < 3) printf("FAIL $p$F_const abi=%d cfg=%s const %d: shadow written\n", abi, "$CFGFMT", c);
                    continue;
                }
                $T x0 = X[a][i];
                X[a][i] = x0 + ($T)h; double fp = loss_$p_$F(X[0], X[1], X[2], alpha, beta, cfg);
                X[a][i] = x0 - ($T)h; double fm = loss_$p_$F(X[0], X[1], X[2], alpha, beta, cfg);
                X[a][i] = x0;
                double fd = (fp - fm) / (2 * h);
                dot += (double)D[a][i] * V[a][i];
                if (fabs(fd - D[a][i]) > tol * (1 + fabs(fd)) && bad++ < 3)
                    printf("FAIL $p$F_const abi=%d cfg=%s const %d array %d elem %d: ad %.8g fd %.8g\n",
                           abi, "$CFGFMT", c, a, i, (double)D[a][i], fd);
            }
        double fa = (loss_$p_$F(X[0], X[1], X[2], alpha + h, beta, cfg) - loss_$p_$F(X[0], X[1], X[2], alpha - h, beta, cfg)) / (2 * h);
        if (fabs(fa - g.a) > tol * (1 + fabs(fa)) && bad++ < 3)
            printf("FAIL $p$F_const abi=%d const %d alpha: ad %.8g fd %.8g\n", abi, c, g.a, fa);
        if (fabs(tan - dot) > tol * (1 + fabs(dot)) && bad++ < 3)
            printf("FAIL $p$F_const abi=%d cfg=%s const %d forward: tangent %.8g gradient.v %.8g\n", abi, "$CFGFMT", c, tan, dot);
    }
    double da[4] = {0.3, -0.2, 0.5, 0.1}, db[4] = {-0.6, 0.25, 0.4, -0.3};
    v2 t2 = __enzyme_fwddiff_w2((void *)loss_$p_$F, enzyme_width, 2,
                                enzyme_dup, X[0], W[0][0], W[0][1], enzyme_dup, X[1], W[1][0], W[1][1],
                                enzyme_dup, X[2], W[2][0], W[2][1], alpha, da[0], da[1], beta, db[0], db[1],
                                enzyme_const, cfg);
    v4 t4 = __enzyme_fwddiff_w4((void *)loss_$p_$F, enzyme_width, 4,
                                enzyme_dup, X[0], W[0][0], W[0][1], W[0][2], W[0][3],
                                enzyme_const, X[1], enzyme_dup, X[2], W[2][0], W[2][1], W[2][2], W[2][3],
                                alpha, da[0], da[1], da[2], da[3], beta, db[0], db[1], db[2], db[3], enzyme_const, cfg);
    for (int l = 0; l < 4; l++) {
        $T *U[3] = {W[0][l], W[1][l], W[2][l]};
        double fd = dirfd_$p_$F(X, U, alpha, beta, da[l], db[l], cfg, sz, h);
        if (l < 2 && fabs(fd - t2.d[l]) > tol * (1 + fabs(fd)) && bad++ < 3)
            printf("FAIL $p$F_width2 abi=%d cfg=%s lane %d: tangent %.8g fd %.8g\n", abi, "$CFGFMT", l, t2.d[l], fd);
        for (int i = 0; i < sz[1]; i++) U[1][i] = 0;   /* X[1] is constant in the width-4 call */
        fd = dirfd_$p_$F(X, U, alpha, beta, da[l], db[l], cfg, sz, h);
        if (fabs(fd - t4.d[l]) > tol * (1 + fabs(fd)) && bad++ < 3)
            printf("FAIL $p$F_width4 abi=%d cfg=%s lane %d: tangent %.8g fd %.8g\n", abi, "$CFGFMT", l, t4.d[l], fd);
    }
    cases++;
    if (bad) failures++;
    for (int a = 0; a < 3; a++) {
        free(X[a]); free(D[a]); free(V[a]);
        for (int l = 0; l < 4; l++) free(W[a][l]);
    }
}
"""
VARIANT_PRECISIONS = ("d", "s")

PRECISION = {"d": ("double", "1e-6", "2e-6"), "s": ("float", "1e-2", "2e-2")}


def family_source(f: Family, p: str) -> str:
    T, h, tol = PRECISION[p]
    arrays = list(f.arrays) + [("__pad%d" % k, "1") for k in range(3 - len(f.arrays))]
    cfgread = " ".join(f"int {c} = cfg[{k + 1}];" for k, c in enumerate(f.cfg))
    arr_decl, sums, frees, sizes = [], [], [], []
    for k, (name, size) in enumerate(arrays):
        arr_decl.append(f"int sz{k} = {size}; $T *{name} = malloc(sz{k} * sizeof($T)); "
                        f"memcpy({name}, X{k}, sz{k} * sizeof($T));")
        sums.append(f"for (int i = 0; i < sz{k}; i++) s += wgt({k}, i) * {name}[i] + 0.25 * {name}[i] * {name}[i];")
        frees.append(f"free({name});")
        sizes.append(f"int sz{k} = {size};")
    colmajor = "lay == 102" if "lay" in f.cfg else "1"
    text = FAMILY_TEMPLATE + DRIVER_TEMPLATE.replace("$KIND", "").replace("$CHECK", "check")
    if p in VARIANT_PRECISIONS:
        text += VARIANT_TEMPLATE + DRIVER_TEMPLATE.replace("$KIND", "_variants").replace("$CHECK", "variants")
    repl = {
        "$FPROTO": f.fproto, "$CFGREAD": cfgread, "$ARRAYS": "\n    ".join(arr_decl),
        "$CBLAS": f.cblas, "$FORTRAN": f.fortran, "$RETTERM": "ret * (1 + 0.5 * ret)" if f.returns else "0",
        "$SUMS": "\n    ".join(sums), "$FREES": " ".join(frees),
        "$CFGPARAMS": ", ".join(f"int {c}" for c in f.cfg), "$CFGLIST": ", ".join(f.cfg),
        "$SIZES": " ".join(sizes), "$SZLIST": "sz0, sz1, sz2", "$INIT": f.init,
        "$CFGFMT": " ".join(f.cfg), "$CFGDECL": ", ".join(f.cfg), "$COLMAJOR": colmajor,
        "$LOOPS": f.loops, "$H": h, "$TOL": tol, "$F": f.name, "$NARRAYS": str(len(f.arrays)),
    }
    for key in sorted(repl, key=len, reverse=True):
        text = text.replace(key, repl[key])
    return text.replace("$T", T).replace("$p", p)


def program_source(group: str) -> str:
    families = GROUPS[group]
    out = [PRELUDE]
    for p in ("d", "s"):
        for f in families:
            out.append(family_source(f, p))
    out.append("int main(void) {")
    for p in ("d", "s"):
        for f in families:
            out.append(f"    family_{p}_{f.name}();")
            if p in VARIANT_PRECISIONS:
                out.append(f"    family_variants_{p}_{f.name}();")
    out.append('    printf("TOTAL %d %d\\n", cases, failures);\n    return failures != 0;\n}')
    return "\n".join(out)
