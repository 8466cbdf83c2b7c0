"""C source of the BLAS rule library, generated from the table.

For a routine `cblas_dgemm` (and its Fortran twin `dgemm_`) the library defines:

| function                          | what it is                                              |
| --------------------------------- | ------------------------------------------------------- |
| `__enzyme_blas_cblas_dgemm`       | what the program's calls of `cblas_dgemm` are renamed to: copies alpha/beta into locals and calls the core |
| `__enzyme_blas_f_dgemm_`          | the same for the Fortran ABI (`dgemm_`): reads the by-pointer integers and characters |
| `__enzyme_blas_dgemm`             | the core: CBLAS's parameters, alpha/beta by pointer; calls the real `cblas_dgemm` |
| `__enzyme_blas_dgemm_aug/_grad/_fwd` | its augment, gradient and forward rules (Enzyme's convention, see docs/custom-derivatives.md) |

plus the registration globals that attach the rules to the core. The augment and gradient
take the two masks of `__enzyme_build_cache_mask_<core>` (custom/convention.py) after their
interleaved arguments: the engine's facts at the call site, bit k for the core's parameter
k -- `eb_over`: its memory may change before the gradient runs; `eb_shad`: it has a shadow
there. The augment copies a cached input only when the table says an adjoint that exists
reads it (`Cache.need`, over the shadow bits: a shadow itself may be poison in the augment)
and its memory may change (or the routine itself overwrites it); otherwise the tape points
at the array itself, or at nothing. The gradient frees only its own copies. The entry points have
bodies, so the engine differentiates them like any code (the adjoint of the alpha it
stored in a local flows back to the caller's alpha); only the core has rules. alpha and
beta reach the core by pointer so that its rules accumulate their adjoints into shadows
whatever their activity (a gradient rule returning a struct of scalar adjoints would have
to match the number of active scalars at every call). A scalar result (dot, nrm2, asum)
leaves the core through a pointer to a local of the entry point for the same reason: the
rules need no return-adjoint slot, whose presence depends on the result's activity.
"""
from __future__ import annotations

import re

from .table import PRECISIONS, ROUTINES, BY_FAMILY, Routine, cblas_name, fortran_name

CORE_PREFIX = "__enzyme_blas_"
ENUM_FROM_CHAR = {"trans": "eb_trans", "uplo": "eb_uplo", "side": "eb_side", "diag": "eb_diag"}
SCALAR_LOCAL = {"alpha": ("al", "dal"), "beta": ("be", "dbe")}

# every BLAS routine a rule calls, CBLAS prototypes with enums as int
_CBLAS_DECLS = """
$T cblas_$pdot(int, const $T *, int, const $T *, int);
void cblas_$paxpy(int, $T, const $T *, int, $T *, int);
void cblas_$pscal(int, $T, $T *, int);
$T cblas_$pnrm2(int, const $T *, int);
$T cblas_$pasum(int, const $T *, int);
void cblas_$pcopy(int, const $T *, int, $T *, int);
void cblas_$pswap(int, $T *, int, $T *, int);
void cblas_$pgemv(int, int, int, int, $T, const $T *, int, const $T *, int, $T, $T *, int);
void cblas_$pger(int, int, int, $T, const $T *, int, const $T *, int, $T *, int);
void cblas_$psymv(int, int, int, $T, const $T *, int, const $T *, int, $T, $T *, int);
void cblas_$psyr2(int, int, int, $T, const $T *, int, const $T *, int, $T *, int);
void cblas_$ptrmv(int, int, int, int, int, const $T *, int, $T *, int);
void cblas_$ptrsv(int, int, int, int, int, const $T *, int, $T *, int);
void cblas_$pgemm(int, int, int, int, int, int, $T, const $T *, int, const $T *, int, $T, $T *, int);
void cblas_$psymm(int, int, int, int, int, $T, const $T *, int, const $T *, int, $T, $T *, int);
void cblas_$psyrk(int, int, int, int, int, $T, const $T *, int, $T, $T *, int);
void cblas_$psyr2k(int, int, int, int, int, $T, const $T *, int, const $T *, int, $T, $T *, int);
void cblas_$ptrmm(int, int, int, int, int, int, int, $T, const $T *, int, $T *, int);
void cblas_$ptrsm(int, int, int, int, int, int, int, $T, const $T *, int, $T *, int);
void $ppotrf_(const char *, const int *, $T *, const int *, int *, size_t);
void $ppotrs_(const char *, const int *, const int *, const $T *, const int *, $T *, const int *, int *, size_t);
void $pgetrs_(const char *, const int *, const int *, const $T *, const int *, const int *, $T *, const int *,
              int *, size_t);
void $pgesv_(const int *, const int *, $T *, const int *, int *, $T *, const int *, int *);
void $plaswp_(const int *, $T *, const int *, const int *, const int *, const int *, const int *);
"""

# layout-aware helpers: a matrix is `r` rows by `c` columns with leading dimension `ld`
_HELPERS = """
static $T *eb_$palloc(size_t n) { return ($T *)eb_get(n * sizeof($T)); }
static $T *eb_$pcopy_vec(int n, const $T *x, int inc) {
    $T *out = eb_$palloc(n > 0 ? (size_t)n : 0);
    if (n > 0) cblas_$pcopy(n, x, inc, out, 1);
    return out;
}
static void eb_$pzero_vec(int n, $T *y, int inc) {
    for (int i = 0; i < n; i++) y[EB_VI(inc, n, i)] = 0;
}
static void eb_$pscale_vec(int n, $T b, $T *y, int inc) {   /* b == 0: y is not read */
    if (b == 1) return;
    if (b == 0) { eb_$pzero_vec(n, y, inc); return; }
    for (int i = 0; i < n; i++) y[EB_VI(inc, n, i)] *= b;
}
#define EB_OUTER(lay, r, c) ((lay) == 102 ? (c) : (r))
#define EB_INNER(lay, r, c) ((lay) == 102 ? (r) : (c))
static void eb_$pcopy_into(int lay, int r, int c, const $T *a, int lda, $T *out, int ldo) {
    int no = EB_OUTER(lay, r, c), ni = EB_INNER(lay, r, c);
    for (int o = 0; o < no; o++) memcpy(out + (size_t)o * ldo, a + (size_t)o * lda, (size_t)ni * sizeof($T));
}
static $T *eb_$pcopy_mat(int lay, int r, int c, const $T *a, int lda) {
    $T *out = eb_$palloc((size_t)(r > 0 ? r : 0) * (size_t)(c > 0 ? c : 0));
    if (r > 0 && c > 0) eb_$pcopy_into(lay, r, c, a, lda, out, EB_LD(lay, r, c));
    return out;
}
static void eb_$pscale_mat(int lay, int r, int c, $T b, $T *a, int lda) {   /* b == 0: a is not read */
    int no = EB_OUTER(lay, r, c), ni = EB_INNER(lay, r, c);
    if (b == 1 || ni <= 0) return;
    for (int o = 0; o < no; o++) {
        if (b == 0) memset(a + (size_t)o * lda, 0, (size_t)ni * sizeof($T));
        else cblas_$pscal(ni, b, a + (size_t)o * lda, 1);
    }
}
static void eb_$paxpy_mat(int lay, int r, int c, $T s, const $T *x, int ldx, $T *y, int ldy) {
    int no = EB_OUTER(lay, r, c), ni = EB_INNER(lay, r, c);
    if (ni <= 0) return;
    for (int o = 0; o < no; o++) cblas_$paxpy(ni, s, x + (size_t)o * ldx, 1, y + (size_t)o * ldy, 1);
}
static double eb_$pdot_mat(int lay, int r, int c, const $T *x, int ldx, const $T *y, int ldy) {
    int no = EB_OUTER(lay, r, c), ni = EB_INNER(lay, r, c);
    double s = 0;
    if (ni <= 0) return 0;
    for (int o = 0; o < no; o++) s += cblas_$pdot(ni, x + (size_t)o * ldx, 1, y + (size_t)o * ldy, 1);
    return s;
}
/* dA(i,j) += s u_i v_j on the triangle of a triangular matrix (diagonal skipped when unit) */
static void eb_$ptri_outer(int lay, int uplo, int diag, int n, $T s, const $T *u, int incu,
                           const $T *v, int incv, $T *a, int lda) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (EB_IN_TRI(uplo, diag, i, j))
                a[EB_IDX(lay, lda, i, j)] += s * u[EB_VI(incu, n, i)] * v[EB_VI(incv, n, j)];
}
/* dA(i,j) += s G(i,j) (or G(j,i)) on the triangle; G is n x n with leading dimension ldg */
static void eb_$ptri_acc(int lay, int uplo, int diag, int n, $T s, const $T *g, int ldg, int transg,
                         $T *a, int lda) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (EB_IN_TRI(uplo, diag, i, j))
                a[EB_IDX(lay, lda, i, j)] += s * (transg ? g[EB_IDX(lay, ldg, j, i)] : g[EB_IDX(lay, ldg, i, j)]);
}
/* the symmetric matrix whose stored triangle is C's with the diagonal doubled (ld n) */
static $T *eb_$psym_from_tri(int lay, int uplo, int n, const $T *c, int ldc) {
    $T *s = eb_$palloc((size_t)n * n);
    memset(s, 0, (size_t)n * n * sizeof($T));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (EB_IN_TRI(uplo, 131, i, j))
                s[EB_IDX(lay, n, i, j)] = (i == j ? 2 : 1) * c[EB_IDX(lay, ldc, i, j)];
    return s;
}
static double eb_$pdot_tri(int lay, int uplo, int n, const $T *x, int ldx, const $T *y, int ldy) {
    double s = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (EB_IN_TRI(uplo, 131, i, j)) s += (double)x[EB_IDX(lay, ldx, i, j)] * y[EB_IDX(lay, ldy, i, j)];
    return s;
}
static void eb_$pscale_tri(int lay, int uplo, int n, $T b, $T *a, int lda) {
    if (b == 1) return;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (EB_IN_TRI(uplo, 131, i, j)) a[EB_IDX(lay, lda, i, j)] = b == 0 ? 0 : b * a[EB_IDX(lay, lda, i, j)];
}
static void eb_$paxpy_tri(int lay, int uplo, int n, $T s, const $T *x, int ldx, $T *y, int ldy) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (EB_IN_TRI(uplo, 131, i, j)) y[EB_IDX(lay, ldy, i, j)] += s * x[EB_IDX(lay, ldx, i, j)];
}
"""

_PRELUDE = """/* generated by enzyme_build/blas/generate.py from enzyme_build/blas/table.py */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#define EB_T(t) ((t) != 111)
#define EB_FLIP(t) ((t) == 111 ? 112 : 111)
#define EB_LD(lay, r, c) ((lay) == 102 ? ((r) > 1 ? (r) : 1) : ((c) > 1 ? (c) : 1))
#define EB_IDX(lay, ld, i, j) ((lay) == 102 ? (size_t)(i) + (size_t)(j) * (size_t)(ld) \\
                                            : (size_t)(i) * (size_t)(ld) + (size_t)(j))
#define EB_VI(inc, n, i) ((inc) >= 0 ? (ptrdiff_t)(i) * (inc) : (ptrdiff_t)((n) - 1 - (i)) * -(ptrdiff_t)(inc))
#define EB_UC(u) ((u) == 121 ? 'U' : 'L')
#define EB_OW(k) ((eb_over >> (k)) & 1)   /* parameter k's memory may change before the gradient */
#define EB_SH(k) ((eb_shad >> (k)) & 1)   /* parameter k has a shadow at this call site */
#define EB_IN_TRI(uplo, diag, i, j) ((i) == (j) ? (diag) != 132 : (uplo) == 121 ? (i) < (j) : (i) > (j))
/* tape copies and temporaries come from a small per-thread pool of recently released
   blocks: the reverse sweep of a large gemm would otherwise fault in fresh pages on
   every call (glibc returns big blocks to the system when they are freed) */
#define EB_POOL 8
#define EB_POOL_BYTES ((size_t)256 << 20)
typedef struct { size_t bytes; size_t pad; } eb_block;
static __thread eb_block *eb_pool[EB_POOL];
static __thread size_t eb_pool_bytes;
static void *eb_get(size_t bytes) {
    eb_block *best = 0; int at = -1;
    for (int i = 0; i < EB_POOL; i++) {
        eb_block *b = eb_pool[i];
        if (b && b->bytes >= bytes && b->bytes <= 2 * bytes + 4096 && (!best || b->bytes < best->bytes)) { best = b; at = i; }
    }
    if (best) { eb_pool[at] = 0; eb_pool_bytes -= best->bytes; return best + 1; }
    eb_block *b = (eb_block *)malloc(sizeof(eb_block) + (bytes ? bytes : 1));
    if (!b) abort();
    b->bytes = bytes;
    return b + 1;
}
/* a thread's pooled blocks are freed when the thread exits */
static pthread_key_t eb_pool_key;
static pthread_once_t eb_pool_once = PTHREAD_ONCE_INIT;
static void eb_pool_drain(void *unused) {
    (void)unused;
    for (int i = 0; i < EB_POOL; i++) { free(eb_pool[i]); eb_pool[i] = 0; }
    eb_pool_bytes = 0;
}
static void eb_pool_init(void) { pthread_key_create(&eb_pool_key, eb_pool_drain); }
static void eb_put(void *p) {
    if (!p) return;
    eb_block *b = (eb_block *)p - 1;
    if (b->bytes >= 4096 && eb_pool_bytes + b->bytes <= EB_POOL_BYTES)
        for (int i = 0; i < EB_POOL; i++)
            if (!eb_pool[i]) {
                pthread_once(&eb_pool_once, eb_pool_init);
                pthread_setspecific(eb_pool_key, (void *)1);
                eb_pool[i] = b;
                eb_pool_bytes += b->bytes;
                return;
            }
    free(b);
}
static int *eb_icopy(int n, const int *x) {
    int *out = (int *)eb_get((size_t)(n > 0 ? n : 0) * sizeof(int));
    if (n > 0) memcpy(out, x, (size_t)n * sizeof(int));
    return out;
}
static int eb_trans(char c) { return (c == 'N' || c == 'n') ? 111 : 112; }
static int eb_uplo(char c) { return (c == 'U' || c == 'u') ? 121 : 122; }
static int eb_side(char c) { return (c == 'L' || c == 'l') ? 141 : 142; }
static int eb_diag(char c) { return (c == 'U' || c == 'u') ? 132 : 131; }
"""


def _sub(text: str, p: str) -> str:
    return text.replace("$T", PRECISIONS[p]).replace("$p", p)


_POINTER_TYPE = {"scalar": "const $T *", "array": "$T *", "iarray": "int *", "info": "int *", "result": "$T *"}
# __enzyme_build_cache_mask: bit k of eb_over / eb_shad stands for the core's parameter k
_MASK_PARAMS = ["long long eb_over", "long long eb_shad"]
_INT_SHADOWED = ("iarray", "info")


def _params(r: Routine) -> tuple[tuple[str, str], ...]:
    """The core's parameters: the routine's, then `res` for a scalar result (returned
    through memory, so the rules need no return-adjoint slot and float results stay float)."""
    return r.params + ((("res", "result"),) if r.returns else ())


def _core_params(r: Routine) -> list[str]:
    return [f"{_POINTER_TYPE[role]}{name}" if role in _POINTER_TYPE else f"int {name}" for name, role in _params(r)]


def _shadows(r: Routine) -> list[tuple[str, str]]:
    """(parameter, C type of its shadow) for every pointer parameter of the core."""
    return [(name, "int *" if role in _INT_SHADOWED else "$T *") for name, role in _params(r)
            if role in _POINTER_TYPE]


def _shadowed_params(r: Routine, batch: bool = False) -> list[str]:
    """Enzyme's convention: every pointer parameter followed by its shadow (null when the
    argument is constant); `batch`: by the array of its shadows, one per lane (or null)."""
    shadows = dict(_shadows(r))
    out = []
    for name, role in _params(r):
        if name in shadows:
            out += [f"{_POINTER_TYPE[role]}{name}",
                    f"{shadows[name]}const *dd_{name}" if batch else f"{shadows[name]}d_{name}"]
        else:
            out.append(f"int {name}")
    return out


def _outputs(r: Routine) -> str:
    """One letter per core parameter: 'o' for a pointer the routine writes derivative-carrying
    values through (it needs a shadow when the call is active), '.' otherwise."""
    return "".join("o" if name in r.writes or role == "result" else "." for name, role in _params(r))


def _real_call(r: Routine, scalar_value) -> str:
    if r.primal:
        return r.primal.rstrip(";")
    args = [scalar_value(n) if role == "scalar" else n for n, role in r.params]
    return f"cblas_$p{r.family}({', '.join(args)})"


def _has(r: Routine, role: str) -> bool:
    return any(rl == role for _, rl in r.params)


def _written(r: Routine) -> set[str]:
    """Pointer parameters of the core the routine may write: its outputs, the result, LAPACK's
    info and pivots."""
    return set(r.writes) | {name for name, role in _params(r) if role in ("result", "info", "iarray")}


def _cache_letters(r: Routine) -> str:
    """The core's `__enzyme_build_cache_mask` letters: 'w' for a pointer it may write, 'r' for
    one it only reads, '.' for the other parameters."""
    written = _written(r)
    return "".join(("w" if name in written else "r") if role in _POINTER_TYPE else "."
                   for name, role in _params(r))


def _bit(r: Routine, name: str) -> int:
    position = [n for n, _ in _params(r)].index(name)
    assert _params(r)[position][1] in _POINTER_TYPE, f"{r.family}: {name} is not a pointer"
    return position


def _needed(r: Routine, expr: str) -> str:
    """A Cache.need condition over `d_<parameter>` as a test of the augment's shadow mask."""
    return re.sub(r"\bd_(\w+)\b", lambda m: f"EB_SH({_bit(r, m.group(1))})", expr)


def _caches(r: Routine, when: str) -> str:
    """The augment's copies: when an adjoint that reads the input exists here (`need`, `cond`)
    and its memory may change before the gradient -- always for the old value of an array the
    routine itself writes; otherwise the tape points at the array itself."""
    written = _written(r)
    out = []
    for c in r.caches:
        if c.when != when:
            continue
        if c.kind == "ivec":
            copy = f"tp->c_{c.name} = eb_icopy({c.dims[0]}, {c.array});"
            keep = f"tp->c_{c.name} = {c.array};"
        elif c.kind == "vec":
            n, inc = c.dims
            copy = f"tp->c_{c.name} = eb_$pcopy_vec({n}, {c.array}, {inc}); tp->l_{c.name} = 1;"
            keep = f"tp->c_{c.name} = {c.array}; tp->l_{c.name} = {inc};"
        else:
            rows, cols, ld = c.dims
            copy = (f"tp->c_{c.name} = eb_$pcopy_mat(layout, {rows}, {cols}, {c.array}, {ld}); "
                    f"tp->l_{c.name} = EB_LD(layout, {rows}, {cols});")
            keep = f"tp->c_{c.name} = {c.array}; tp->l_{c.name} = {ld};"
        if c.array in written:   # the routine itself overwrites the old value
            changes = "1" if when == "before" else f"EB_OW({_bit(r, c.array)})"
        else:
            # BLAS forbids an output to overlap an input; a program that passes the very same
            # array as both (axpy(n, a, y, 1, y, 1)) still gets its copy
            same = [f"(void *){c.array} == (void *){w}" for w, role in _params(r)
                    if w in written and role in ("array", "iarray")]
            changes = " || ".join([f"EB_OW({_bit(r, c.array)})"] + same)
        out.append(f"    if (({c.cond}) && ({_needed(r, c.need)})) {{\n"
                   f"        if ({changes}) {{ {copy} tp->o_{c.name} = 1; }}\n"
                   f"        else {{ {keep} }}\n    }}")
    return "\n".join(out)


# entry points are inlined into the program before AD: its calls reach the core directly, so
# activity sees which arrays the routine only reads (they get no shadow: `_outputs`)
_ENTRY = "__attribute__((always_inline)) "


def routine_source(r: Routine, p: str) -> str:
    f, core = r.family, f"{CORE_PREFIX}$p{r.family}"
    lines = [f"/* ---- {cblas_name(f, p) + ' / ' if r.api == 'blas' else ''}{fortran_name(f, p)} */"]
    fields = [f"$T {n};" for n in r.scalars()] + ["double ret;", "int info;"]
    for c in r.caches:   # what the formulas read, its increment or leading dimension, our copy?
        fields += [f"{'int' if c.kind == 'ivec' else '$T'} *c_{c.name};", f"int l_{c.name};",
                   f"char o_{c.name};"]
    lines.append(f"typedef struct {{ {' '.join(fields)} }} eb_tape_$p{f};")
    layout = "" if _has(r, "layout") else "    const int layout = 102; (void)layout;\n"
    # the core: CBLAS's parameters with alpha/beta (and a scalar result) by pointer
    call = _real_call(r, lambda n: f"*{n}")
    lines.append(f"__attribute__((noinline)) void {core}({', '.join(_core_params(r))}) {{ "
                 f"{'*res = ' if r.returns else ''}{call}; }}")
    scalars_in = layout + "".join(f"    $T {SCALAR_LOCAL[n][0]} = *{n};\n" for n in r.scalars())
    # augment: copies what the reverse sweep reads, runs the routine once
    body = [scalars_in + "".join(f"    tp->{n} = {SCALAR_LOCAL[n][0]};\n" for n in r.scalars()),
            _caches(r, "before")]
    primal = _real_call(r, lambda n: SCALAR_LOCAL[n][0])
    body.append(f"    tp->ret = {primal}; *res = ($T)tp->ret;" if r.returns else f"    {primal};")
    if _has(r, "info"):
        body.append("    tp->info = *info;")
    body.append(_caches(r, "after"))
    lines.append(f"void *{core}_aug({', '.join(_shadowed_params(r) + _MASK_PARAMS)}) {{\n"
                 f"    eb_tape_$p{f} *tp = (eb_tape_$p{f} *)calloc(1, sizeof *tp);\n"
                 + "\n".join(b for b in body if b) + "\n    return tp;\n}")
    # gradient: a shadow the mask does not mark is null, as the augment saw it; the result's
    # adjoint is consumed from its shadow
    unpack = layout + "".join(f"    if (!EB_SH({k})) d_{n} = 0;\n" for k, (n, role) in enumerate(_params(r))
                              if role in _POINTER_TYPE)
    unpack += "".join(f"    $T {SCALAR_LOCAL[n][0]} = tp->{n};\n" for n in r.scalars())
    if r.returns:
        unpack += "    double dret = 0; if (d_res) { dret = *d_res; *d_res = 0; }\n"
    frees = "".join(f"    if (tp->o_{c.name}) eb_put(tp->c_{c.name});\n" for c in r.caches)
    lines.append(f"void {core}_grad({', '.join(_shadowed_params(r) + _MASK_PARAMS + ['void *tape_'])}) {{\n"
                 f"    eb_tape_$p{f} *tp = (eb_tape_$p{f} *)tape_;\n{unpack}"
                 f"    {{{r.reverse}\n    }}\n{frees}    free(tp);\n}}")
    # forward: one lane; and every lane of vector mode, the routine itself run once
    tangents = "".join(f"    $T {SCALAR_LOCAL[n][1]} = d_{n} ? *d_{n} : 0;\n" for n in r.scalars())
    before, primal_mark, after = r.forward.partition("PRIMAL;")
    assert primal_mark, f"{f}: the forward formula has no PRIMAL; marker"
    primal_stmt = f"ret = {primal};" if r.returns else f"{primal};"
    result = "    double ret = 0, tan = 0;\n" if r.returns else ""
    tail = "    *res = ($T)ret; if (d_res) *d_res = ($T)tan;\n" if r.returns else ""
    lines.append(f"void {core}_fwd({', '.join(_shadowed_params(r))}) {{\n{scalars_in}{tangents}{result}"
                 f"    {{{before}}}\n    {primal_stmt}\n    {{{after}\n    }}\n{tail}}}")
    lane = "".join(f"        {shadow}d_{n} = dd_{n} ? dd_{n}[lane] : 0;\n" for n, shadow in _shadows(r)) + \
        "".join(f"        $T {SCALAR_LOCAL[n][1]} = d_{n} ? *d_{n} : 0;\n" for n in r.scalars())
    lines.append(f"void {core}_fwd_batch({', '.join(_shadowed_params(r, batch=True) + ['int width'])}) {{\n"
                 f"{scalars_in}{'    double ret = 0;' if r.returns else ''}\n"
                 f"    for (int lane = 0; lane < width; lane++) {{\n{lane}        {{{before}}}\n    }}\n"
                 f"    {primal_stmt}\n"
                 f"    for (int lane = 0; lane < width; lane++) {{\n{lane}"
                 f"        {'double tan = 0;' if r.returns else ''}\n        {{{after}}}\n"
                 f"        {'if (d_res) *d_res = ($T)tan;' if r.returns else ''}\n    }}\n"
                 f"{'    *res = ($T)ret;' if r.returns else ''}\n}}")
    # registrations (docs/custom-derivatives.md; the last two are enzyme-build's own)
    lines.append(f"void *__enzyme_register_gradient_{core}[3] = "
                 f"{{(void *){core}, (void *){core}_aug, (void *){core}_grad}};")
    lines.append(f"void *__enzyme_register_derivative_{core}[2] = {{(void *){core}, (void *){core}_fwd}};")
    lines.append(f"void *__enzyme_build_batch_derivative_{core}[2] = {{(void *){core}, (void *){core}_fwd_batch}};")
    lines.append(f'void *__enzyme_build_null_shadows_{core}[2] = {{(void *){core}, (void *)"{_outputs(r)}"}};')
    lines.append(f'void *__enzyme_build_cache_mask_{core}[2] = {{(void *){core}, (void *)"{_cache_letters(r)}"}};')
    # entry points the program's calls are renamed to
    cret = "$T" if r.returns else "void"
    result_local = "    $T a_res;\n" if r.returns else ""
    result_back = "    return a_res;\n" if r.returns else ""
    if r.api == "blas":
        cparams = [f"$T {n}" if role == "scalar" else f"$T *{n}" if role == "array" else f"int {n}"
                   for n, role in r.params]
        locals_ = "".join(f"    $T a_{n} = {n};\n" for n in r.scalars()) + result_local
        args = [f"&a_{n}" if role in ("scalar", "result") else n for n, role in _params(r)]
        lines.append(f"{_ENTRY}{cret} {CORE_PREFIX}{cblas_name(f, '$p')}({', '.join(cparams)}) {{\n{locals_}"
                     f"    {core}({', '.join(args)});\n{result_back}}}")
    fparams, fargs = [], []
    for n, role in _params(r):
        if role == "layout":
            fargs.append("102")
        elif role in ENUM_FROM_CHAR:
            fparams.append(f"const char *{n}")
            fargs.append(f"{ENUM_FROM_CHAR[role]}(*{n})")
        elif role == "int":
            fparams.append(f"const int *{n}")
            fargs.append(f"*{n}")
        elif role == "scalar":
            fparams.append(f"const $T *{n}")
            fargs.append(f"&a_{n}")
        elif role in ("info", "result"):
            if role == "info":
                fparams.append(f"int *{n}")
            fargs.append(f"&a_{n}")
        elif role == "iarray":
            fparams.append(f"int *{n}")
            fargs.append(n)
        else:
            fparams.append(f"$T *{n}")
            fargs.append(n)
    flocals = "".join(f"    $T a_{n} = *{n};\n" for n in r.scalars()) + result_local
    info = [n for n, role in r.params if role == "info"]
    flocals += "".join(f"    int a_{n} = 0;\n" for n in info)
    store = "".join(f"    *{n} = a_{n};\n" for n in info)
    lines.append(f"{_ENTRY}{cret} {CORE_PREFIX}f_{fortran_name(f, '$p')}({', '.join(fparams)}) {{\n{flocals}"
                 f"    {core}({', '.join(fargs)});\n{store}{result_back}}}")
    return _sub("\n".join(lines), p) + "\n"


def library_source(selected: list[tuple[str, str]], inactive: list[str] = ()) -> str:
    """The C source for the (family, precision) pairs a program uses, and the
    registration of the derivative-free functions it declares."""
    out = [_PRELUDE]
    if inactive:
        out.append("".join(f"extern void {name}(void);\n" for name in inactive)
                   + "void *__enzyme_inactivefn_blas[] = {"
                   + ", ".join(f"(void *){name}" for name in inactive) + "};\n")
    for p in sorted({p for _, p in selected}):
        out.append(_sub(_CBLAS_DECLS, p))
        out.append(_sub(_HELPERS, p))
    for family, p in sorted(set(selected)):
        out.append(routine_source(BY_FAMILY[family], p))
    return "\n".join(out)


def entry_name(symbol: str, family: str, p: str, abi: str) -> str:
    """The name a program's call of `symbol` is renamed to."""
    return f"{CORE_PREFIX}{symbol}" if abi == "cblas" else f"{CORE_PREFIX}f_{symbol}"


__all__ = ["library_source", "entry_name", "ROUTINES"]
