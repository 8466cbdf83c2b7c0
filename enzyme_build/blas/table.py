"""The BLAS derivative table: one entry per routine family, for both precisions.

Each entry names the routine's parameters in CBLAS order with their role, the inputs the
reverse sweep needs copied to the tape, and the derivative formulas as C statements that
are themselves BLAS calls (the adjoint of a gemm is two gemms). `generate.py` turns every
entry into the rule functions of Enzyme's custom-derivative convention; nothing else in
the engine knows about BLAS.

Roles:

| role     | meaning                                                        |
| -------- | -------------------------------------------------------------- |
| layout   | CBLAS_ORDER (101 row-major, 102 column-major); absent in Fortran |
| trans / uplo / side / diag | CBLAS enums; Fortran passes a character        |
| int      | a dimension, leading dimension or increment                      |
| scalar   | alpha / beta: by value in CBLAS, by pointer in Fortran           |
| array    | a vector or matrix (pointer): it gets a shadow                   |
| iarray   | an integer array (LAPACK's pivots): a pointer, its shadow unused  |
| info     | LAPACK's status output (int *): the entry point passes a local     |

Inside the formula snippets (C, `$T` the element type, `$p` the precision letter):
parameters keep their names; `al`/`be` are the values of alpha/beta and `d_alpha`/
`d_beta` point to their adjoints (reverse) or hold tangents `dal`/`dbe` (forward);
`d_X` is the shadow of array X; `tp->c_X` is what the formulas read for a cached X: its tape
copy or, when X is not overwritten before the gradient, X itself -- with increment `tp->l_X`
for a vector and leading dimension `tp->l_X` for a matrix (1 and the tight dimension for a
copy, X's own otherwise: loops index vectors with `EB_VI(tp->l_X, n, i)`); `tp->ret` is the
primal result. A null `d_alpha`/`d_beta`/`d_res` means that scalar is not active here.
Snippets of routines that return a value set `ret` (primal) and `tan` (tangent) in
forward mode and read `dret` in reverse mode. The `eb_$p*` helpers are in generate.py.

A null `d_X` means X is constant (enzyme_const, a global or never-active memory): the
formulas skip its work and never write through it. The forward formula is one lane's
tangent around the marker `PRIMAL;` (the routine itself): the statements before it read
the inputs as they were, those after it the results. Vector mode runs every lane's part
before the marker, the routine once, then every lane's part after it -- so no state may
pass from one part to the other (declare what each needs in it).

Conventions shared with BLAS: an output overwritten with beta == 0 is not read, so
neither is its tangent or adjoint through beta; scal/nrm2/asum do nothing for incx <= 0.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Cache:
    """An input the reverse formulas read after the call. The augment rule copies it to the
    tape when some adjoint reading it exists at this call site (`need`) and its memory may
    change before the gradient runs (the engine's `overwritten` mask; always for the old
    value of an array the routine itself writes); otherwise the formulas read the array
    itself, or nothing when no adjoint needs it."""
    name: str             # the array parameter
    kind: str             # "vec" (length, inc), "mat" (rows, cols, ld) or "ivec" (length)
    dims: tuple[str, ...]  # C expressions: (length, inc) or (rows, cols, ld)
    when: str = "before"  # "before" the primal call (its input) or "after" (its output)
    cond: str = "1"       # C condition on the values under which the formulas read it
    source: str = ""      # the array copied, when the tape field is named differently
    # the adjoints whose formulas read it, as C over `d_<parameter>`: 1 when that parameter
    # (an array, alpha/beta, `res` for a returned value) has a shadow at this call site. The
    # reverse formula must read `tp->c_<name>` only under this condition (and `cond`).
    need: str = "1"

    @property
    def array(self) -> str:
        return self.source or self.name


@dataclass(frozen=True)
class Routine:
    family: str                       # "gemm": cblas_dgemm, cblas_sgemm, dgemm_, sgemm_
    params: tuple[tuple[str, str], ...]  # (name, role) in CBLAS order
    returns: bool                     # returns a scalar (dot, nrm2, asum)
    caches: tuple[Cache, ...]
    reverse: str                      # C: accumulate adjoints (the primal call already ran)
    forward: str                      # C: one lane's tangent around `PRIMAL;` (the call)
    level: int = 1
    api: str = "blas"                 # "blas": CBLAS and Fortran forms; "lapack": Fortran only
    primal: str = ""                  # C: the real call (default: the CBLAS routine)
    writes: tuple[str, ...] = ()      # arrays the routine writes derivative-carrying values to

    def fortran_params(self) -> tuple[tuple[str, str], ...]:
        return tuple(p for p in self.params if p[1] != "layout")

    def arrays(self) -> list[str]:
        return [n for n, r in self.params if r == "array"]

    def scalars(self) -> list[str]:
        return [n for n, r in self.params if r == "scalar"]


def _p(spec: str) -> tuple[tuple[str, str], ...]:
    """'layout:layout trans:trans m n alpha:scalar A:array lda' -> (name, role) pairs."""
    out = []
    for item in spec.split():
        name, _, role = item.partition(":")
        out.append((name, role or "int"))
    return tuple(out)


ROUTINES: tuple[Routine, ...] = (
    # ------------------------------------------------------------------ level 1
    Routine(
        "dot", _p("n x:array incx y:array incy"), True,
        (Cache("x", "vec", ("n", "incx"), need="d_res && d_y"),
         Cache("y", "vec", ("n", "incy"), need="d_res && d_x")),
        reverse="""
    if (d_res && d_x) cblas_$paxpy(n, dret, tp->c_y, tp->l_y, d_x, incx);
    if (d_res && d_y) cblas_$paxpy(n, dret, tp->c_x, tp->l_x, d_y, incy);""",
        forward="""
    PRIMAL;
    tan = (d_x ? (double)cblas_$pdot(n, d_x, incx, y, incy) : 0) + (d_y ? (double)cblas_$pdot(n, x, incx, d_y, incy) : 0);"""),
    Routine(
        "axpy", _p("n alpha:scalar x:array incx y:array incy"), False,
        (Cache("x", "vec", ("n", "incx"), need="d_y && d_alpha"),),
        writes=("y",),
        reverse="""
    if (d_y) {
        if (d_alpha) *d_alpha += cblas_$pdot(n, tp->c_x, tp->l_x, d_y, incy);
        if (d_x) cblas_$paxpy(n, al, d_y, incy, d_x, incx);
    }""",
        forward="""
    if (d_y && d_x) cblas_$paxpy(n, al, d_x, incx, d_y, incy);
    if (d_y && dal != 0) cblas_$paxpy(n, dal, x, incx, d_y, incy);
    PRIMAL;"""),
    Routine(
        "scal", _p("n alpha:scalar x:array incx"), False,
        (Cache("x", "vec", ("n", "incx"), cond="incx > 0", need="d_x && d_alpha"),),
        writes=("x",),
        reverse="""
    if (incx > 0 && d_x) {
        if (d_alpha) *d_alpha += cblas_$pdot(n, tp->c_x, tp->l_x, d_x, incx);
        cblas_$pscal(n, al, d_x, incx);
    }""",
        forward="""
    if (incx > 0 && d_x) {
        cblas_$pscal(n, al, d_x, incx);
        if (dal != 0) cblas_$paxpy(n, dal, x, incx, d_x, incx);
    }
    PRIMAL;   /* nothing for incx <= 0 */"""),
    Routine(
        "nrm2", _p("n x:array incx"), True,
        (Cache("x", "vec", ("n", "incx"), cond="incx > 0", need="d_x && d_res"),),
        reverse="""
    if (d_x && d_res && incx > 0 && tp->ret != 0) cblas_$paxpy(n, dret / tp->ret, tp->c_x, tp->l_x, d_x, incx);""",
        forward="""
    PRIMAL;
    tan = (d_x && incx > 0 && ret != 0) ? cblas_$pdot(n, x, incx, d_x, incx) / ret : 0;"""),
    Routine(
        "asum", _p("n x:array incx"), True,
        (Cache("x", "vec", ("n", "incx"), cond="incx > 0", need="d_x && d_res"),),
        reverse="""
    if (d_x && d_res && incx > 0)
        for (int i = 0; i < n; i++) {
            $T v = tp->c_x[EB_VI(tp->l_x, n, i)];
            d_x[(size_t)i * incx] += (v > 0) ? dret : (v < 0) ? -dret : 0;
        }""",
        forward="""
    PRIMAL;
    tan = 0;
    if (d_x && incx > 0)
        for (int i = 0; i < n; i++) {
            $T v = x[(size_t)i * incx];
            tan += (v > 0) ? d_x[(size_t)i * incx] : (v < 0) ? -d_x[(size_t)i * incx] : 0;
        }"""),
    Routine(
        "copy", _p("n x:array incx y:array incy"), False, (),
        writes=("y",),
        reverse="""
    if (d_y) {
        if (d_x) cblas_$paxpy(n, 1, d_y, incy, d_x, incx);
        eb_$pzero_vec(n, d_y, incy);
    }""",
        forward="""
    if (d_y) { if (d_x) cblas_$pcopy(n, d_x, incx, d_y, incy); else eb_$pzero_vec(n, d_y, incy); }
    PRIMAL;"""),
    Routine(
        "swap", _p("n x:array incx y:array incy"), False, (),
        writes=("x", "y"),
        reverse="""
    /* what moved into constant memory takes its adjoint with it */
    if (d_x && d_y) cblas_$pswap(n, d_x, incx, d_y, incy);
    else if (d_x) eb_$pzero_vec(n, d_x, incx);
    else if (d_y) eb_$pzero_vec(n, d_y, incy);""",
        forward="""
    if (d_x && d_y) cblas_$pswap(n, d_x, incx, d_y, incy);
    else if (d_x) eb_$pzero_vec(n, d_x, incx);
    else if (d_y) eb_$pzero_vec(n, d_y, incy);
    PRIMAL;"""),
    # ------------------------------------------------------------------ level 2
    Routine(
        "gemv", _p("layout:layout trans:trans m n alpha:scalar A:array lda x:array incx "
                   "beta:scalar y:array incy"), False,
        (Cache("A", "mat", ("m", "n", "lda"), need="d_y && (d_alpha || d_x)"),
         Cache("x", "vec", ("EB_T(trans) ? m : n", "incx"), need="d_y && (d_alpha || d_A)"),
         Cache("y", "vec", ("EB_T(trans) ? n : m", "incy"), cond="be != 0", need="d_y && d_beta")),
        level=2,
        writes=("y",),
        reverse="""
    int lx = EB_T(trans) ? m : n, ly = EB_T(trans) ? n : m;
    if (d_y) {
        if (d_alpha || d_x) {
            $T *t = eb_$palloc(lx);   /* t = op(A)^T dy */
            cblas_$pgemv(layout, EB_FLIP(trans), m, n, 1, tp->c_A, tp->l_A, d_y, incy, 0, t, 1);
            if (d_alpha) *d_alpha += cblas_$pdot(lx, t, 1, tp->c_x, tp->l_x);
            if (d_x) cblas_$paxpy(lx, al, t, 1, d_x, incx);
            eb_put(t);
        }
        if (d_A && !EB_T(trans)) cblas_$pger(layout, m, n, al, d_y, incy, tp->c_x, tp->l_x, d_A, lda);
        if (d_A && EB_T(trans)) cblas_$pger(layout, m, n, al, tp->c_x, tp->l_x, d_y, incy, d_A, lda);
        if (d_beta && be != 0) *d_beta += cblas_$pdot(ly, tp->c_y, tp->l_y, d_y, incy);
        eb_$pscale_vec(ly, be, d_y, incy);
    }""",
        forward="""
    int ly = EB_T(trans) ? n : m;
    if (d_y) {
        eb_$pscale_vec(ly, be, d_y, incy);
        if (be != 0 && dbe != 0) cblas_$paxpy(ly, dbe, y, incy, d_y, incy);
        if (d_A) cblas_$pgemv(layout, trans, m, n, al, d_A, lda, x, incx, 1, d_y, incy);
        if (d_x) cblas_$pgemv(layout, trans, m, n, al, A, lda, d_x, incx, 1, d_y, incy);
        if (dal != 0) cblas_$pgemv(layout, trans, m, n, dal, A, lda, x, incx, 1, d_y, incy);
    }
    PRIMAL;"""),
    Routine(
        "ger", _p("layout:layout m n alpha:scalar x:array incx y:array incy A:array lda"), False,
        (Cache("x", "vec", ("m", "incx"), need="d_A && (d_alpha || d_y)"),
         Cache("y", "vec", ("n", "incy"), need="d_A && (d_alpha || d_x)")),
        level=2,
        writes=("A",),
        reverse="""
    if (d_A) {
        if (d_alpha || d_x) {
            $T *t = eb_$palloc(m);   /* t = dA y */
            cblas_$pgemv(layout, 111, m, n, 1, d_A, lda, tp->c_y, tp->l_y, 0, t, 1);
            if (d_alpha) *d_alpha += cblas_$pdot(m, t, 1, tp->c_x, tp->l_x);
            if (d_x) cblas_$paxpy(m, al, t, 1, d_x, incx);
            eb_put(t);
        }
        if (d_y) cblas_$pgemv(layout, 112, m, n, al, d_A, lda, tp->c_x, tp->l_x, 1, d_y, incy);
    }""",
        forward="""
    if (d_A && d_x) cblas_$pger(layout, m, n, al, d_x, incx, y, incy, d_A, lda);
    if (d_A && d_y) cblas_$pger(layout, m, n, al, x, incx, d_y, incy, d_A, lda);
    if (d_A && dal != 0) cblas_$pger(layout, m, n, dal, x, incx, y, incy, d_A, lda);
    PRIMAL;"""),
    Routine(
        "symv", _p("layout:layout uplo:uplo n alpha:scalar A:array lda x:array incx "
                   "beta:scalar y:array incy"), False,
        (Cache("A", "mat", ("n", "n", "lda"), need="d_y && (d_alpha || d_x)"),
         Cache("x", "vec", ("n", "incx"), need="d_y && (d_alpha || d_A)"),
         Cache("y", "vec", ("n", "incy"), cond="be != 0", need="d_y && d_beta")),
        level=2,
        writes=("y",),
        reverse="""
    if (d_y) {
        if (d_alpha || d_x) {
            $T *t = eb_$palloc(n);   /* t = A dy */
            cblas_$psymv(layout, uplo, n, 1, tp->c_A, tp->l_A, d_y, incy, 0, t, 1);
            if (d_alpha) *d_alpha += cblas_$pdot(n, t, 1, tp->c_x, tp->l_x);
            if (d_x) cblas_$paxpy(n, al, t, 1, d_x, incx);
            eb_put(t);
        }
        /* the stored triangle: dy x^T + x dy^T off the diagonal, dy_i x_i on it */
        if (d_A) {
            cblas_$psyr2(layout, uplo, n, al, d_y, incy, tp->c_x, tp->l_x, d_A, lda);
            for (int i = 0; i < n; i++)
                d_A[EB_IDX(layout, lda, i, i)] -= al * d_y[EB_VI(incy, n, i)] * tp->c_x[EB_VI(tp->l_x, n, i)];
        }
        if (d_beta && be != 0) *d_beta += cblas_$pdot(n, tp->c_y, tp->l_y, d_y, incy);
        eb_$pscale_vec(n, be, d_y, incy);
    }""",
        forward="""
    if (d_y) {
        eb_$pscale_vec(n, be, d_y, incy);
        if (be != 0 && dbe != 0) cblas_$paxpy(n, dbe, y, incy, d_y, incy);
        if (d_A) cblas_$psymv(layout, uplo, n, al, d_A, lda, x, incx, 1, d_y, incy);
        if (d_x) cblas_$psymv(layout, uplo, n, al, A, lda, d_x, incx, 1, d_y, incy);
        if (dal != 0) cblas_$psymv(layout, uplo, n, dal, A, lda, x, incx, 1, d_y, incy);
    }
    PRIMAL;"""),
    Routine(
        "trmv", _p("layout:layout uplo:uplo trans:trans diag:diag n A:array lda x:array incx"), False,
        (Cache("A", "mat", ("n", "n", "lda"), need="d_x"), Cache("x", "vec", ("n", "incx"), need="d_x && d_A")),
        level=2,
        writes=("x",),
        reverse="""
    /* x_new = op(A) x_old: dA += dx x_old^T (or x_old dx^T) on the triangle; dx = op(A)^T dx */
    if (d_x && d_A && !EB_T(trans)) eb_$ptri_outer(layout, uplo, diag, n, 1, d_x, incx, tp->c_x, tp->l_x, d_A, lda);
    if (d_x && d_A && EB_T(trans)) eb_$ptri_outer(layout, uplo, diag, n, 1, tp->c_x, tp->l_x, d_x, incx, d_A, lda);
    if (d_x) cblas_$ptrmv(layout, uplo, EB_FLIP(trans), diag, n, tp->c_A, tp->l_A, d_x, incx);""",
        forward="""
    if (d_x) {
        cblas_$ptrmv(layout, uplo, trans, diag, n, A, lda, d_x, incx);
        if (d_A) {
            $T *t = eb_$pcopy_vec(n, x, incx);   /* op(dA) x_old (dA's diagonal is not part of a unit A) */
            cblas_$ptrmv(layout, uplo, trans, diag, n, d_A, lda, t, 1);
            if (diag == 132) cblas_$paxpy(n, -1, x, incx, t, 1);
            cblas_$paxpy(n, 1, t, 1, d_x, incx);
            eb_put(t);
        }
    }
    PRIMAL;"""),
    Routine(
        "trsv", _p("layout:layout uplo:uplo trans:trans diag:diag n A:array lda x:array incx"), False,
        (Cache("A", "mat", ("n", "n", "lda"), need="d_x"),
         Cache("x", "vec", ("n", "incx"), when="after", need="d_x && d_A")),
        level=2,
        writes=("x",),
        reverse="""
    /* op(A) x_new = x_old: w = op(A)^-T dx is dx_old; dA -= w x_new^T (or x_new w^T) */
    if (d_x) cblas_$ptrsv(layout, uplo, EB_FLIP(trans), diag, n, tp->c_A, tp->l_A, d_x, incx);
    if (d_x && d_A && !EB_T(trans)) eb_$ptri_outer(layout, uplo, diag, n, -1, d_x, incx, tp->c_x, tp->l_x, d_A, lda);
    if (d_x && d_A && EB_T(trans)) eb_$ptri_outer(layout, uplo, diag, n, -1, tp->c_x, tp->l_x, d_x, incx, d_A, lda);""",
        forward="""
    PRIMAL;
    if (d_x && d_A) {
        $T *t = eb_$pcopy_vec(n, x, incx);   /* op(dA) x_new */
        cblas_$ptrmv(layout, uplo, trans, diag, n, d_A, lda, t, 1);
        if (diag == 132) cblas_$paxpy(n, -1, x, incx, t, 1);
        cblas_$paxpy(n, -1, t, 1, d_x, incx);
        eb_put(t);
    }
    if (d_x) cblas_$ptrsv(layout, uplo, trans, diag, n, A, lda, d_x, incx);"""),
    # ------------------------------------------------------------------ level 3
    Routine(
        "gemm", _p("layout:layout transa:trans transb:trans m n k alpha:scalar A:array lda "
                   "B:array ldb beta:scalar C:array ldc"), False,
        (Cache("A", "mat", ("EB_T(transa) ? k : m", "EB_T(transa) ? m : k", "lda"), need="d_C && (d_alpha || d_B)"),
         Cache("B", "mat", ("EB_T(transb) ? n : k", "EB_T(transb) ? k : n", "ldb"), need="d_C && (d_alpha || d_A)"),
         Cache("C", "mat", ("m", "n", "ldc"), cond="be != 0", need="d_C && d_beta")),
        level=3,
        writes=("C",),
        reverse="""
    int ra = EB_T(transa) ? k : m, ca = EB_T(transa) ? m : k;
    int lt = EB_LD(layout, ra, ca);
    if (d_C) {
        if (d_alpha || d_A) {
            $T *t = eb_$palloc((size_t)ra * ca);   /* dC op(B)^T, shaped like A */
            if (!EB_T(transa))
                cblas_$pgemm(layout, 111, EB_T(transb) ? 111 : 112, m, k, n, 1, d_C, ldc, tp->c_B, tp->l_B, 0, t, lt);
            else
                cblas_$pgemm(layout, EB_T(transb) ? 112 : 111, 112, k, m, n, 1, tp->c_B, tp->l_B, d_C, ldc, 0, t, lt);
            if (d_alpha) *d_alpha += eb_$pdot_mat(layout, ra, ca, t, lt, tp->c_A, tp->l_A);
            if (d_A) eb_$paxpy_mat(layout, ra, ca, al, t, lt, d_A, lda);
            eb_put(t);
        }
        if (d_B && !EB_T(transb))
            cblas_$pgemm(layout, EB_T(transa) ? 111 : 112, 111, k, n, m, al, tp->c_A, tp->l_A, d_C, ldc, 1, d_B, ldb);
        if (d_B && EB_T(transb))
            cblas_$pgemm(layout, 112, EB_T(transa) ? 112 : 111, n, k, m, al, d_C, ldc, tp->c_A, tp->l_A, 1, d_B, ldb);
        if (d_beta && be != 0) *d_beta += eb_$pdot_mat(layout, m, n, tp->c_C, tp->l_C, d_C, ldc);
        eb_$pscale_mat(layout, m, n, be, d_C, ldc);
    }""",
        forward="""
    if (d_C) {
        eb_$pscale_mat(layout, m, n, be, d_C, ldc);
        if (be != 0 && dbe != 0) eb_$paxpy_mat(layout, m, n, dbe, C, ldc, d_C, ldc);
        if (d_A) cblas_$pgemm(layout, transa, transb, m, n, k, al, d_A, lda, B, ldb, 1, d_C, ldc);
        if (d_B) cblas_$pgemm(layout, transa, transb, m, n, k, al, A, lda, d_B, ldb, 1, d_C, ldc);
        if (dal != 0) cblas_$pgemm(layout, transa, transb, m, n, k, dal, A, lda, B, ldb, 1, d_C, ldc);
    }
    PRIMAL;"""),
    Routine(
        "symm", _p("layout:layout side:side uplo:uplo m n alpha:scalar A:array lda B:array ldb "
                   "beta:scalar C:array ldc"), False,
        (Cache("A", "mat", ("side == 141 ? m : n", "side == 141 ? m : n", "lda"), need="d_C && (d_alpha || d_B)"),
         Cache("B", "mat", ("m", "n", "ldb"), need="d_C && (d_alpha || d_A)"),
         Cache("C", "mat", ("m", "n", "ldc"), cond="be != 0", need="d_C && d_beta")),
        level=3,
        writes=("C",),
        reverse="""
    int lt = EB_LD(layout, m, n), ka = side == 141 ? m : n;
    if (d_C) {
    if (d_alpha || d_B) {
        $T *t = eb_$palloc((size_t)m * n);   /* A dC (left) or dC A (right) */
        cblas_$psymm(layout, side, uplo, m, n, 1, tp->c_A, tp->l_A, d_C, ldc, 0, t, lt);
        if (d_alpha) *d_alpha += eb_$pdot_mat(layout, m, n, t, lt, tp->c_B, tp->l_B);
        if (d_B) eb_$paxpy_mat(layout, m, n, al, t, lt, d_B, ldb);
        eb_put(t);
    }
    /* stored triangle of A: G + G^T off the diagonal, G on it (G = dC B^T or B^T dC) */
    if (d_A) cblas_$psyr2k(layout, uplo, side == 141 ? 111 : 112, ka, side == 141 ? n : m, al,
                           d_C, ldc, tp->c_B, tp->l_B, 1, d_A, lda);
    for (int i = 0; d_A && i < ka; i++) {
        double g = 0;
        for (int j = 0; j < (side == 141 ? n : m); j++)
            g += side == 141 ? (double)d_C[EB_IDX(layout, ldc, i, j)] * tp->c_B[EB_IDX(layout, tp->l_B, i, j)]
                             : (double)d_C[EB_IDX(layout, ldc, j, i)] * tp->c_B[EB_IDX(layout, tp->l_B, j, i)];
        d_A[EB_IDX(layout, lda, i, i)] -= al * g;
    }
    if (d_beta && be != 0) *d_beta += eb_$pdot_mat(layout, m, n, tp->c_C, tp->l_C, d_C, ldc);
    eb_$pscale_mat(layout, m, n, be, d_C, ldc);
    }""",
        forward="""
    if (d_C) {
        eb_$pscale_mat(layout, m, n, be, d_C, ldc);
        if (be != 0 && dbe != 0) eb_$paxpy_mat(layout, m, n, dbe, C, ldc, d_C, ldc);
        if (d_A) cblas_$psymm(layout, side, uplo, m, n, al, d_A, lda, B, ldb, 1, d_C, ldc);
        if (d_B) cblas_$psymm(layout, side, uplo, m, n, al, A, lda, d_B, ldb, 1, d_C, ldc);
        if (dal != 0) cblas_$psymm(layout, side, uplo, m, n, dal, A, lda, B, ldb, 1, d_C, ldc);
    }
    PRIMAL;"""),
    Routine(
        "syrk", _p("layout:layout uplo:uplo trans:trans n k alpha:scalar A:array lda "
                   "beta:scalar C:array ldc"), False,
        (Cache("A", "mat", ("EB_T(trans) ? k : n", "EB_T(trans) ? n : k", "lda"), need="d_C && (d_alpha || d_A)"),
         Cache("C", "mat", ("n", "n", "ldc"), cond="be != 0", need="d_C && d_beta")),
        level=3,
        writes=("C",),
        reverse="""
    int ra = EB_T(trans) ? k : n, ca = EB_T(trans) ? n : k;
    int lt = EB_LD(layout, ra, ca);
    if (d_C) {
    if (d_alpha || d_A) {
        $T *s = eb_$psym_from_tri(layout, uplo, n, d_C, ldc);   /* dC's triangle, diagonal doubled */
        $T *t = eb_$palloc((size_t)ra * ca);   /* S A (or A S), shaped like A */
        if (!EB_T(trans)) cblas_$psymm(layout, 141, uplo, n, k, 1, s, n, tp->c_A, tp->l_A, 0, t, lt);
        else cblas_$psymm(layout, 142, uplo, k, n, 1, s, n, tp->c_A, tp->l_A, 0, t, lt);
        if (d_alpha) *d_alpha += 0.5 * eb_$pdot_mat(layout, ra, ca, t, lt, tp->c_A, tp->l_A);
        if (d_A) eb_$paxpy_mat(layout, ra, ca, al, t, lt, d_A, lda);
        eb_put(t);
        eb_put(s);
    }
    if (d_beta && be != 0) *d_beta += eb_$pdot_tri(layout, uplo, n, tp->c_C, tp->l_C, d_C, ldc);
    eb_$pscale_tri(layout, uplo, n, be, d_C, ldc);
    }""",
        forward="""
    if (d_C) {
        eb_$pscale_tri(layout, uplo, n, be, d_C, ldc);
        if (be != 0 && dbe != 0) eb_$paxpy_tri(layout, uplo, n, dbe, C, ldc, d_C, ldc);
        if (d_A) cblas_$psyr2k(layout, uplo, trans, n, k, al, d_A, lda, A, lda, 1, d_C, ldc);
        if (dal != 0) cblas_$psyrk(layout, uplo, trans, n, k, dal, A, lda, 1, d_C, ldc);
    }
    PRIMAL;"""),
    Routine(
        "trmm", _p("layout:layout side:side uplo:uplo transa:trans diag:diag m n alpha:scalar "
                   "A:array lda B:array ldb"), False,
        (Cache("A", "mat", ("side == 141 ? m : n", "side == 141 ? m : n", "lda"), need="d_B"),
         Cache("B", "mat", ("m", "n", "ldb"), need="d_B && (d_A || d_alpha)")),
        level=3,
        writes=("B",),
        reverse="""
    int ka = side == 141 ? m : n, lg = ka;
    if (d_B && d_A) {
        $T *g = eb_$palloc((size_t)ka * ka);   /* gradient of op(A) */
        if (side == 141) cblas_$pgemm(layout, 111, 112, m, m, n, al, d_B, ldb, tp->c_B, tp->l_B, 0, g, lg);
        else cblas_$pgemm(layout, 112, 111, n, n, m, al, tp->c_B, tp->l_B, d_B, ldb, 0, g, lg);
        eb_$ptri_acc(layout, uplo, diag, ka, 1, g, lg, EB_T(transa), d_A, lda);
        eb_put(g);
    }
    if (d_B) {
        cblas_$ptrmm(layout, side, uplo, EB_FLIP(transa), diag, m, n, 1, tp->c_A, tp->l_A, d_B, ldb);
        if (d_alpha) *d_alpha += eb_$pdot_mat(layout, m, n, d_B, ldb, tp->c_B, tp->l_B);
        eb_$pscale_mat(layout, m, n, al, d_B, ldb);
    }""",
        forward="""
    int lt = EB_LD(layout, m, n);
    if (d_B) {
        $T *t = eb_$pcopy_mat(layout, m, n, B, ldb);   /* al op(dA) B (+ dal op(A) B) */
        if (d_A) {
            cblas_$ptrmm(layout, side, uplo, transa, diag, m, n, al, d_A, lda, t, lt);
            if (diag == 132) eb_$paxpy_mat(layout, m, n, -al, B, ldb, t, lt);
        }
        cblas_$ptrmm(layout, side, uplo, transa, diag, m, n, al, A, lda, d_B, ldb);
        if (d_A) eb_$paxpy_mat(layout, m, n, 1, t, lt, d_B, ldb);
        if (dal != 0) {
            eb_$pcopy_into(layout, m, n, B, ldb, t, lt);
            cblas_$ptrmm(layout, side, uplo, transa, diag, m, n, dal, A, lda, t, lt);
            eb_$paxpy_mat(layout, m, n, 1, t, lt, d_B, ldb);
        }
        eb_put(t);
    }
    PRIMAL;"""),
    Routine(
        "trsm", _p("layout:layout side:side uplo:uplo transa:trans diag:diag m n alpha:scalar "
                   "A:array lda B:array ldb"), False,
        (Cache("A", "mat", ("side == 141 ? m : n", "side == 141 ? m : n", "lda"), need="d_B"),
         Cache("B", "mat", ("m", "n", "ldb"), need="d_B && d_alpha"),
         Cache("Bn", "mat", ("m", "n", "ldb"), when="after", source="B", need="d_B && d_A")),
        level=3,
        writes=("B",),
        reverse="""
    int ka = side == 141 ? m : n, lg = ka;
    if (d_B) {
        /* W = op(A)^-T dB (left) or dB op(A)^-T (right), in place */
        cblas_$ptrsm(layout, side, uplo, EB_FLIP(transa), diag, m, n, 1, tp->c_A, tp->l_A, d_B, ldb);
        if (d_alpha) *d_alpha += eb_$pdot_mat(layout, m, n, d_B, ldb, tp->c_B, tp->l_B);
        if (d_A) {
            $T *g = eb_$palloc((size_t)ka * ka);   /* gradient of op(A): -W X^T or -X^T W */
            if (side == 141) cblas_$pgemm(layout, 111, 112, m, m, n, -1, d_B, ldb, tp->c_Bn, tp->l_Bn, 0, g, lg);
            else cblas_$pgemm(layout, 112, 111, n, n, m, -1, tp->c_Bn, tp->l_Bn, d_B, ldb, 0, g, lg);
            eb_$ptri_acc(layout, uplo, diag, ka, 1, g, lg, EB_T(transa), d_A, lda);
            eb_put(g);
        }
        eb_$pscale_mat(layout, m, n, al, d_B, ldb);
    }""",
        forward="""
    /* op(A) X = al B: dX = op(A)^-1 (al dB + dal B - op(dA) X); the old B first */
    if (d_B) {
        eb_$pscale_mat(layout, m, n, al, d_B, ldb);
        if (dal != 0) eb_$paxpy_mat(layout, m, n, dal, B, ldb, d_B, ldb);
    }
    PRIMAL;
    if (d_B) {
        if (d_A) {
            int lt = EB_LD(layout, m, n);
            $T *t = eb_$pcopy_mat(layout, m, n, B, ldb);   /* op(dA) X (left) or X op(dA) (right) */
            cblas_$ptrmm(layout, side, uplo, transa, diag, m, n, 1, d_A, lda, t, lt);
            if (diag == 132) eb_$paxpy_mat(layout, m, n, -1, B, ldb, t, lt);
            eb_$paxpy_mat(layout, m, n, -1, t, lt, d_B, ldb);
            eb_put(t);
        }
        cblas_$ptrsm(layout, side, uplo, transa, diag, m, n, 1, A, lda, d_B, ldb);
    }"""),
)

# ---------------------------------------------------------------------- LAPACK (column-major)
# The factor of potrf/potrs is L (uplo 'L') or U = L^T (uplo 'U'). potrf works on the
# lower triangle of a view `lv`: U stored column-major is L stored row-major.
LAPACK: tuple[Routine, ...] = (
    Routine(
        "potrf", _p("uplo:uplo n A:array lda info:info"), False,
        (Cache("L", "mat", ("n", "n", "lda"), when="after", source="A", need="d_A"),),
        api="lapack", level=4,
        primal="{ char u = EB_UC(uplo); $ppotrf_(&u, &n, A, &lda, info, 1); }",
        writes=("A",),
        reverse="""
    /* A = L L^T: Abar = L^-T Phi(L^T Lbar) L^-1, Phi = lower triangle with half diagonal;
       the stored triangle gets S_ij + S_ji off the diagonal and S_ii on it */
    int lv = uplo == 121 ? 101 : 102;
    if (d_A && tp->info == 0 && n > 0) {
        $T *t = eb_$palloc((size_t)n * n);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) t[EB_IDX(lv, n, i, j)] = i >= j ? d_A[EB_IDX(lv, lda, i, j)] : 0;
        cblas_$ptrmm(lv, 141, 122, 112, 131, n, n, 1, tp->c_L, tp->l_L, t, n);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                if (i < j) t[EB_IDX(lv, n, i, j)] = 0; else if (i == j) t[EB_IDX(lv, n, i, j)] *= 0.5;
        cblas_$ptrsm(lv, 141, 122, 112, 131, n, n, 1, tp->c_L, tp->l_L, t, n);
        cblas_$ptrsm(lv, 142, 122, 111, 131, n, n, 1, tp->c_L, tp->l_L, t, n);
        for (int i = 0; i < n; i++)
            for (int j = 0; j <= i; j++)
                d_A[EB_IDX(lv, lda, i, j)] = i == j ? t[EB_IDX(lv, n, i, i)]
                                                    : t[EB_IDX(lv, n, i, j)] + t[EB_IDX(lv, n, j, i)];
        eb_put(t);
    }""",
        forward="""
    PRIMAL;
    int lv = uplo == 121 ? 101 : 102;
    if (d_A && *info == 0 && n > 0) {
        /* dL = L Phi(L^-1 dA L^-T) */
        $T *t = eb_$palloc((size_t)n * n);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                t[EB_IDX(lv, n, i, j)] = i >= j ? d_A[EB_IDX(lv, lda, i, j)] : d_A[EB_IDX(lv, lda, j, i)];
        cblas_$ptrsm(lv, 141, 122, 111, 131, n, n, 1, A, lda, t, n);
        cblas_$ptrsm(lv, 142, 122, 112, 131, n, n, 1, A, lda, t, n);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                if (i < j) t[EB_IDX(lv, n, i, j)] = 0; else if (i == j) t[EB_IDX(lv, n, i, j)] *= 0.5;
        cblas_$ptrmm(lv, 141, 122, 111, 131, n, n, 1, A, lda, t, n);
        for (int i = 0; i < n; i++)
            for (int j = 0; j <= i; j++) d_A[EB_IDX(lv, lda, i, j)] = t[EB_IDX(lv, n, i, j)];
        eb_put(t);
    }"""),
    Routine(
        "potrs", _p("uplo:uplo n nrhs A:array lda B:array ldb info:info"), False,
        (Cache("A", "mat", ("n", "n", "lda"), need="d_B"),
         Cache("X", "mat", ("n", "nrhs", "ldb"), when="after", source="B", need="d_B && d_A")),
        api="lapack", level=4,
        primal="{ char u = EB_UC(uplo); $ppotrs_(&u, &n, &nrhs, A, &lda, B, &ldb, info, 1); }",
        writes=("B",),
        reverse="""
    /* A = L L^T (tl applies L, tlt L^T to the stored triangle); X = A^-1 B:
       Bbar = A^-1 Xbar, Lbar = tril(G L) with G = -(Bbar X^T + X Bbar^T) */
    int tl = uplo == 122 ? 111 : 112, tlt = uplo == 122 ? 112 : 111;
    if (d_B && tp->info == 0 && n > 0) {
        cblas_$ptrsm(102, 141, uplo, tl, 131, n, nrhs, 1, tp->c_A, tp->l_A, d_B, ldb);
        cblas_$ptrsm(102, 141, uplo, tlt, 131, n, nrhs, 1, tp->c_A, tp->l_A, d_B, ldb);
    }
    if (d_B && d_A && tp->info == 0 && n > 0) {
        $T *g = eb_$palloc((size_t)n * n);
        cblas_$pgemm(102, 111, 112, n, n, nrhs, -1, d_B, ldb, tp->c_X, tp->l_X, 0, g, n);
        cblas_$pgemm(102, 111, 112, n, n, nrhs, -1, tp->c_X, tp->l_X, d_B, ldb, 1, g, n);
        cblas_$ptrmm(102, 142, uplo, tl, 131, n, n, 1, tp->c_A, tp->l_A, g, n);
        eb_$ptri_acc(102, uplo, 131, n, 1, g, n, uplo == 121, d_A, lda);
        eb_put(g);
    }""",
        forward="""
    PRIMAL;
    int tl = uplo == 122 ? 111 : 112, tlt = uplo == 122 ? 112 : 111;
    if (d_B && d_A && *info == 0 && n > 0) {
        /* dX = A^-1 (dB - dL (L^T X) - L (dL^T X)) */
        $T *t = eb_$pcopy_mat(102, n, nrhs, B, ldb);
        cblas_$ptrmm(102, 141, uplo, tlt, 131, n, nrhs, 1, A, lda, t, n);
        cblas_$ptrmm(102, 141, uplo, tl, 131, n, nrhs, 1, d_A, lda, t, n);
        eb_$paxpy_mat(102, n, nrhs, -1, t, n, d_B, ldb);
        eb_$pcopy_into(102, n, nrhs, B, ldb, t, n);
        cblas_$ptrmm(102, 141, uplo, tlt, 131, n, nrhs, 1, d_A, lda, t, n);
        cblas_$ptrmm(102, 141, uplo, tl, 131, n, nrhs, 1, A, lda, t, n);
        eb_$paxpy_mat(102, n, nrhs, -1, t, n, d_B, ldb);
        eb_put(t);
    }
    if (d_B && *info == 0 && n > 0) {
        cblas_$ptrsm(102, 141, uplo, tl, 131, n, nrhs, 1, A, lda, d_B, ldb);
        cblas_$ptrsm(102, 141, uplo, tlt, 131, n, nrhs, 1, A, lda, d_B, ldb);
    }"""),
    Routine(
        "gesv", _p("n nrhs A:array lda ipiv:iarray B:array ldb info:info"), False,
        (Cache("LU", "mat", ("n", "n", "lda"), when="after", source="A", need="d_A || d_B"),
         Cache("X", "mat", ("n", "nrhs", "ldb"), when="after", source="B", need="d_A && d_B"),
         Cache("ipiv", "ivec", ("n",), when="after", need="d_A || d_B")),
        api="lapack", level=4,
        primal="$pgesv_(&n, &nrhs, A, &lda, ipiv, B, &ldb, info);",
        writes=("A", "B"),
        reverse="""
    /* A = P L U is overwritten by the factors, B by X = A^-1 B.
       Bbar = A^-T Xbar; Abar = P L^-T (tril_-1(L^T Lbar) + triu(Ubar U^T)) U^-T - Bbar X^T */
    int one = 1, info2 = 0, minus = -1;
    if (d_B && tp->info == 0 && n > 0)
        $pgetrs_("T", &n, &nrhs, tp->c_LU, &tp->l_LU, tp->c_ipiv, d_B, &ldb, &info2, 1);
    if (d_A && tp->info == 0 && n > 0) {
        $T *m1 = eb_$palloc((size_t)n * n), *m2 = eb_$palloc((size_t)n * n);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                m1[EB_IDX(102, n, i, j)] = i > j ? d_A[EB_IDX(102, lda, i, j)] : 0;
                m2[EB_IDX(102, n, i, j)] = i <= j ? d_A[EB_IDX(102, lda, i, j)] : 0;
            }
        cblas_$ptrmm(102, 141, 122, 112, 132, n, n, 1, tp->c_LU, tp->l_LU, m1, n);
        cblas_$ptrmm(102, 142, 121, 112, 131, n, n, 1, tp->c_LU, tp->l_LU, m2, n);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                m1[EB_IDX(102, n, i, j)] = i > j ? m1[EB_IDX(102, n, i, j)] : m2[EB_IDX(102, n, i, j)];
        cblas_$ptrsm(102, 141, 122, 112, 132, n, n, 1, tp->c_LU, tp->l_LU, m1, n);
        cblas_$ptrsm(102, 142, 121, 112, 131, n, n, 1, tp->c_LU, tp->l_LU, m1, n);
        $plaswp_(&n, m1, &n, &one, &n, tp->c_ipiv, &minus);
        if (d_B) cblas_$pgemm(102, 111, 112, n, n, nrhs, -1, d_B, ldb, tp->c_X, tp->l_X, 1, m1, n);
        eb_$pcopy_into(102, n, n, m1, n, d_A, lda);
        eb_put(m1);
        eb_put(m2);
    }""",
        forward="""
    PRIMAL;
    /* the input tangent dA is read before the factors' tangents replace it */
    $T *f = d_A ? eb_$pcopy_mat(102, n, n, d_A, lda) : 0;
    int one = 1, info2 = 0;
    if (d_B && *info == 0 && n > 0) {
        if (f) cblas_$pgemm(102, 111, 111, n, nrhs, n, -1, f, n, B, ldb, 1, d_B, ldb);
        $pgetrs_("N", &n, &nrhs, A, &lda, ipiv, d_B, &ldb, &info2, 1);
    }
    if (f && *info == 0 && n > 0) {
        /* F = L^-1 P^T dA U^-1; dL = L tril_-1(F), dU = triu(F) U */
        $plaswp_(&n, f, &n, &one, &n, ipiv, &one);
        cblas_$ptrsm(102, 141, 122, 111, 132, n, n, 1, A, lda, f, n);
        cblas_$ptrsm(102, 142, 121, 111, 131, n, n, 1, A, lda, f, n);
        $T *u = eb_$palloc((size_t)n * n);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                u[EB_IDX(102, n, i, j)] = i <= j ? f[EB_IDX(102, n, i, j)] : 0;
                if (i <= j) f[EB_IDX(102, n, i, j)] = 0;
            }
        cblas_$ptrmm(102, 141, 122, 111, 132, n, n, 1, A, lda, f, n);
        cblas_$ptrmm(102, 142, 121, 111, 131, n, n, 1, A, lda, u, n);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                d_A[EB_IDX(102, lda, i, j)] = i > j ? f[EB_IDX(102, n, i, j)] : u[EB_IDX(102, n, i, j)];
        eb_put(u);
    }
    eb_put(f);"""),
)

ROUTINES = ROUTINES + LAPACK
BY_FAMILY = {r.family: r for r in ROUTINES}
PRECISIONS = {"d": "double", "s": "float"}

# BLAS/LAPACK functions with no derivative: index searches, machine constants, error
# handlers and library settings. A program that declares them gets them registered with
# __enzyme_inactivefn (only those it declares, so nothing new has to be linked).
INACTIVE = (
    "cblas_idamax", "cblas_isamax", "cblas_idamin", "cblas_isamin", "idamax_", "isamax_",
    "dlamch_", "slamch_", "ilaenv_", "lsame_", "xerbla_", "cblas_xerbla",
    "openblas_set_num_threads", "openblas_get_num_threads", "openblas_get_num_procs",
    "openblas_get_parallel", "openblas_get_config", "openblas_get_corename", "goto_set_num_threads",
)


def cblas_name(family: str, p: str) -> str:
    return f"cblas_{p}{family}"


def fortran_name(family: str, p: str) -> str:
    return f"{p}{family}_"


def known_names() -> dict[str, tuple[str, str, str]]:
    """Every BLAS symbol we have rules for -> (family, precision, 'cblas'|'fortran')."""
    out = {}
    for r in ROUTINES:
        for p in PRECISIONS:
            if r.api == "blas":
                out[cblas_name(r.family, p)] = (r.family, p, "cblas")
            out[fortran_name(r.family, p)] = (r.family, p, "fortran")
    return out
