"""Loops reading a heap block the function overwrites afterwards: snapshots of the block.

The class: time steppers and iterative schemes over the function's own buffers -- two buffers
swapped every step, a scratch buffer copied back, an in-place update reading ahead of what it
writes, a sparse (CSR) product with indirect reads, a 2-D stencil, a table read and then
overwritten, three buffers rotated. The cache planner used to keep every value such a loop loaded, and what it
computed from them, one cell per iteration each (a 3-point stencil two per point and step, a
CSR product one per nonzero). When nothing in the loop writes the block, the forward sweep
now copies it onto the tape once (at the loop's preheader, or at the header of the loop the
buffers swap in) and the reverse sweep reads the loads back from the copy
(ad/cache.py, `CachePlanner._snapshot_plan`; analysis/addresses.py).

Each member is checked against central differences in reverse and forward mode at -O0, -O2
and with AD before optimization. The cases the snapshot must not serve are here too and must
stay right: an in-place update reading what it already wrote (Gauss-Seidel) and a few reads of
a large block per entry of a small inner loop. The plans of the stepping members must take a snapshot and keep no
loaded value per point.
"""
from __future__ import annotations

import pytest

from ad_helpers import CXX_FD_HEAD, CXX_FD_MAIN, FD_HEAD, LEVELS, cache_plan, check_fd_rows, fd_main, fd_rows
from test_cache_shapes import DECLS
from test_carried_loads import PROGRAMS as CARRIED

PRELUDE = "static volatile int count = 12, steps = 4;\n"

STEPPERS = {
    # two buffers swapped every step, a 3-point stencil and a cubic reaction term (also a
    # member of test_carried_loads.py's class)
    "ping_pong": CARRIED["stencil_ping_pong"],
    # new values into a scratch buffer reused every step, copied back with memcpy
    "scratch_copied_back": PRELUDE + r"""
double f(const double *x) {
  int n = count, m = steps;
  double *u = malloc(sizeof(double) * n), *w = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) u[i] = x[(i + 1) % 4] + 0.05 * i;
  for (int s = 0; s < m; s++) {
    w[0] = u[0]; w[n - 1] = u[n - 1];
    for (int i = 1; i < n - 1; i++) w[i] = u[i] + 0.15 * (u[i - 1] - 2 * u[i] + u[i + 1]) * sin(u[i]);
    memcpy(u, w, sizeof(double) * n);
  }
  double e = 0;
  for (int i = 0; i < n; i++) e += u[i] * x[i % 4];
  free(u); free(w);
  return e;
}
""",
    # an in-place update: u[i] is written after u[i + 1] is read (the old left neighbour in a
    # scalar), so every load of the step reads memory the step has not written yet
    "in_place_reading_ahead": CARRIED["in_place_stencil"],
    # the operator assembled once into CSR arrays (values from x), a product per step
    "csr_product": PRELUDE + r"""
struct csr { int n; int *row, *col; double *val; };
static void matvec(const struct csr *a, const double *v, double *y) {
  for (int i = 0; i < a->n; i++) {
    double s = 0;
    for (int k = a->row[i]; k < a->row[i + 1]; k++) s += a->val[k] * v[a->col[k]];
    y[i] = s;
  }
}
double f(const double *x) {
  int n = count, m = steps, nnz = 0;
  struct csr a = {n, malloc(sizeof(int) * (n + 1)), malloc(sizeof(int) * 3 * n), malloc(sizeof(double) * 3 * n)};
  for (int i = 0; i < n; i++) {
    a.row[i] = nnz;
    for (int d = -1; d <= 1; d++)
      if (i + d >= 0 && i + d < n) { a.col[nnz] = (i + d + n) % n; a.val[nnz++] = d ? 0.2 * x[i % 4] : 0.5; }
  }
  a.row[n] = nnz;
  double *u = malloc(sizeof(double) * n), *next = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) u[i] = x[(i + 2) % 4] + 0.1 * i;
  for (int s = 0; s < m; s++) {
    matvec(&a, u, next);
    for (int i = 0; i < n; i++) next[i] += 0.05 * u[i] * u[i];
    double *t = u; u = next; next = t;
  }
  double e = 0;
  for (int i = 0; i < n; i++) e += u[i] * u[i];
  free(u); free(next); free(a.row); free(a.col); free(a.val);
  return e;
}
""",
    # a 2-D 5-point stencil over two swapped n x n buffers
    "stencil_2d": "static volatile int side = 6, steps = 3;\n" + r"""
double f(const double *x) {
  int n = side, m = steps;
  double *u = malloc(sizeof(double) * n * n), *v = malloc(sizeof(double) * n * n);
  for (int i = 0; i < n * n; i++) { u[i] = x[i % 4] * (1 + 0.05 * i); v[i] = u[i]; }
  for (int s = 0; s < m; s++) {
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++) {
        double c = u[i * n + j];
        v[i * n + j] = c + 0.1 * (u[(i - 1) * n + j] + u[(i + 1) * n + j] + u[i * n + j - 1] + u[i * n + j + 1] - 4 * c)
                     + 0.05 * c * c;
      }
    double *t = u; u = v; v = t;
  }
  double e = 0;
  for (int i = 0; i < n * n; i++) e += u[i] * u[i];
  free(u); free(v);
  return e;
}
""",
    # a table read three times per element (neighbours) in a loop, then overwritten
    "table_overwritten": PRELUDE + r"""
double f(const double *x) {
  int n = count;
  double *t = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) t[i] = exp(0.1 * x[i % 4] * i);
  double s = 0;
  for (int i = 1; i + 1 < n; i++) s += t[i - 1] * t[i] * t[i + 1] * x[(i + 1) % 4];
  for (int i = 0; i < n; i++) t[i] = 0;
  s += t[n / 2];
  free(t);
  return s;
}
""",
    # three buffers rotated every step (a wave equation's previous, current and next states)
    "three_buffer_rotation": PRELUDE + r"""
double f(const double *x) {
  int n = count, m = steps + 2;
  double *prev = malloc(sizeof(double) * n), *cur = malloc(sizeof(double) * n), *next = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) { prev[i] = x[i % 4] * 0.5; cur[i] = x[(i + 1) % 4]; next[i] = 0; }
  for (int s = 0; s < m; s++) {
    for (int i = 1; i < n - 1; i++)
      next[i] = 2 * cur[i] - prev[i] + 0.1 * (cur[i - 1] - 2 * cur[i] + cur[i + 1]) * cur[i];
    next[0] = cur[0]; next[n - 1] = cur[n - 1];
    double *t = prev; prev = cur; cur = next; next = t;
  }
  double e = 0;
  for (int i = 0; i < n; i++) e += cur[i] * cur[i] + prev[i];
  free(prev); free(cur); free(next);
  return e;
}
""",
}

# the caller's array (an enzyme_dup argument) advanced in place: its size is not known, so
# the copy spans the bytes the loop's reads cover (`_snapshot_range`). f copies x into the
# caller-style state first so that the programs keep fd_main's signature.
CALLER_STATE = {
    # advanced through a scratch buffer copied back over the interior
    "caller_array_through_scratch": PRELUDE + r"""
__attribute__((noinline)) static double advance(double *u, const double *x, int n, int m) {
  double *w = malloc(sizeof(double) * n);
  for (int s = 0; s < m; s++) {
    for (int i = 1; i < n - 1; i++)
      w[i] = u[i] + 0.2 * x[i % 4] * (u[i - 1] - 2 * u[i] + u[i + 1]) + 0.1 * (u[i] - u[i] * u[i] * u[i]);
    memcpy(u + 1, w + 1, sizeof(double) * (n - 2));
  }
  free(w);
  double e = 0;
  for (int i = 0; i < n; i++) e += u[i] * u[i];
  return e;
}
double f(const double *x) {
  int n = count;
  double state[64];
  for (int i = 0; i < n; i++) state[i] = x[(i + 1) % 4] * (1 + 0.05 * i);
  return advance(state, x, n, steps);
}
""",
    # ping-pong between the caller's array and a buffer of its own, copied back at the end
    "caller_array_ping_pong": PRELUDE + r"""
__attribute__((noinline)) static double advance(double *state, const double *x, int n, int m) {
  double *u = state, *v = malloc(sizeof(double) * n);
  v[0] = u[0]; v[n - 1] = u[n - 1];
  for (int s = 0; s < m; s++) {
    for (int i = 1; i < n - 1; i++) v[i] = u[i] + 0.25 * (u[i - 1] - 2 * u[i] + u[i + 1]) * x[(i + s) % 4];
    double *t = u; u = v; v = t;
  }
  if (u != state) memcpy(state, u, sizeof(double) * n);
  free(u == state ? v : u);
  double e = 0;
  for (int i = 0; i < n; i++) e += state[i] * state[i] * state[i];
  return e;
}
double f(const double *x) {
  int n = count;
  double state[64];
  for (int i = 0; i < n; i++) state[i] = x[i % 4] + 0.1 * i;
  return advance(state, x, n, steps);
}
""",
}
STEPPERS.update(CALLER_STATE)

# buffers that may be the null pointer: allocated only when the size is not 0, as
# std::vector allocates its storage (`allocation_extent(..., null_ok=True)`); the copy takes
# no bytes where the pointer is null
NULLABLE = {
    "nullable_ping_pong": PRELUDE + r"""
double f(const double *x) {
  int n = count, m = steps;
  double *u = n > 0 ? malloc(sizeof(double) * n) : NULL, *v = n > 0 ? malloc(sizeof(double) * n) : NULL;
  for (int i = 0; i < n; i++) u[i] = x[(i + 1) % 4] + 0.05 * i;
  if (n > 0) { v[0] = u[0]; v[n - 1] = u[n - 1]; }
  for (int s = 0; s < m; s++) {
    for (int i = 1; i + 1 < n; i++)
      v[i] = u[i] + 0.2 * x[i % 4] * (u[i - 1] - 2 * u[i] + u[i + 1]) + 0.05 * sin(u[i]);
    double *t = u; u = v; v = t;
  }
  double e = 0;
  for (int i = 0; i < n; i++) e += u[i] * u[i];
  free(u); free(v);
  return e;
}
""",
    "nullable_scratch_copied_back": PRELUDE + r"""
double f(const double *x) {
  int n = count, m = steps;
  double *u = n ? calloc(n, sizeof(double)) : NULL, *w = n ? malloc(sizeof(double) * n) : NULL;
  for (int i = 0; i < n; i++) u[i] = x[i % 4] * (1 + 0.05 * i);
  for (int s = 0; s < m; s++) {
    w[0] = u[0]; w[n - 1] = u[n - 1];
    for (int i = 1; i < n - 1; i++) w[i] = u[i] + 0.15 * (u[i - 1] - 2 * u[i] + u[i + 1]) * cos(u[i]);
    memcpy(u, w, sizeof(double) * n);
  }
  double e = 0;
  for (int i = 0; i < n; i++) e += u[i] * x[(i + 2) % 4];
  free(u); free(w);
  return e;
}
""",
}
STEPPERS.update(NULLABLE)

# the same class in C++: std::vector buffers swapped by std::swap, or assigned back
CXX_STEPPERS = {
    "vector_swap": r"""
#include <vector>
static volatile int count = 12, steps = 4;
double f(const double *x) {
  int n = count;
  std::vector<double> u(n), v(n);
  for (size_t i = 0; i < u.size(); i++) u[i] = x[(i + 1) % 4] + 0.05 * i;
  v.front() = u.front(); v.back() = u.back();
  for (int s = 0; s < steps; s++) {
    for (size_t i = 1; i + 1 < u.size(); i++)
      v[i] = u[i] + 0.2 * x[i % 4] * (u[i - 1] - 2 * u[i] + u[i + 1]) + 0.1 * (u[i] - u[i] * u[i] * u[i]);
    std::swap(u, v);
  }
  double e = 0;
  for (double w : u) e += 0.5 * w * w;
  return e;
}
""",
    "vector_copied_back": r"""
#include <vector>
#include <algorithm>
static volatile int count = 12, steps = 4;
double f(const double *x) {
  int n = count;
  std::vector<double> u(n), w(n);
  for (size_t i = 0; i < u.size(); i++) u[i] = x[i % 4] * (1 + 0.05 * i);
  for (int s = 0; s < steps; s++) {
    w.front() = u.front(); w.back() = u.back();
    for (size_t i = 1; i + 1 < u.size(); i++) w[i] = u[i] + 0.15 * (u[i - 1] - 2 * u[i] + u[i + 1]) * std::sin(u[i]);
    std::copy(w.begin(), w.end(), u.begin());
  }
  double e = 0;
  for (size_t i = 0; i < u.size(); i++) e += u[i] * x[(i + 2) % 4];
  return e;
}
""",
}
# assigned back with operator=, which may reallocate u inside the step loop (its size is not
# known there): no copy serves, the gradient must stay right
CXX_NOT_SERVED = {
    "vector_assigned_back": CXX_STEPPERS["vector_copied_back"].replace(
        "#include <algorithm>\n", "").replace("std::copy(w.begin(), w.end(), u.begin());", "u = w;"),
}

# what a snapshot must not serve: the gradient must stay right
NOT_SERVED = {
    # Gauss-Seidel: the update reads u[i - 1] after the same sweep wrote it
    "in_place_reading_behind": PRELUDE + r"""
double f(const double *x) {
  int n = count, m = steps;
  double *u = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) u[i] = x[i % 4] + 0.1 * i;
  for (int s = 0; s < m; s++)
    for (int i = 1; i < n - 1; i++) u[i] = 0.3 * u[i - 1] + 0.4 * u[i] * u[i] + 0.3 * u[i + 1] * x[i % 4];
  double e = 0;
  for (int i = 0; i < n; i++) e += u[i] * u[i];
  free(u);
  return e;
}
""",
    # a few reads of a large block per point, the block updated by the outer loop
    "few_reads_per_entry": PRELUDE + r"""
double f(const double *x) {
  int n = count;
  double *big = malloc(sizeof(double) * 64);
  for (int i = 0; i < 64; i++) big[i] = x[i % 4] * (1 + 0.01 * i);
  double s = 0;
  for (int i = 0; i < n; i++) {
    for (int k = 0; k < 2; k++) s += sin(big[(i * 7 + k * 13) % 64]) * x[k];
    big[(i * 5) % 64] = s * 0.1;
  }
  free(big);
  return s;
}
""",
}


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(STEPPERS) + sorted(NOT_SERVED))
def test_programs_of_the_class(name, level, tmp_path):
    flags, env = LEVELS[level]
    text = FD_HEAD + {**STEPPERS, **NOT_SERVED}[name] + fd_main(4)
    check_fd_rows(fd_rows(tmp_path, text, flags, env), 4)


def _plan(tmp_path, name: str, head: str | None = None) -> str:
    return cache_plan(tmp_path, FD_HEAD + {**STEPPERS, **NOT_SERVED}[name] + fd_main(4),
                      head or "cache plan of @diffe_f (combined mode)")


@pytest.mark.parametrize("name", ["ping_pong", "scratch_copied_back", "in_place_reading_ahead", "csr_product",
                                  "stencil_2d", "table_overwritten", "three_buffer_rotation",
                                  "caller_array_through_scratch",
                                  "caller_array_ping_pong", *NULLABLE])
def test_steppers_read_a_snapshot_and_keep_no_loaded_value(name, tmp_path):
    plan = _plan(tmp_path, name, "cache plan of @augmented_advance / @reverse_advance (split mode)"
                 if name in CALLER_STATE else None)
    assert "snapshot of " in plan and "re-read from a snapshot" in plan, plan
    # in the blocks reading the copy, every load comes from it, a re-read or a recomputation
    # (a final loop reading each element once may still keep its values)
    rows = [line.split() for line in plan.splitlines() if line.startswith("  %")]
    served = {r[0] for r in rows if "snapshot" in " ".join(r)}
    assert not [r for r in rows if r[0] in served and r[2] == "load" and "kept:" in r], plan


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(CXX_STEPPERS) + sorted(CXX_NOT_SERVED))
def test_cxx_programs_of_the_class(name, level, tmp_path):
    flags, env = LEVELS[level]
    text = {**CXX_STEPPERS, **CXX_NOT_SERVED}[name]
    check_fd_rows(fd_rows(tmp_path, CXX_FD_HEAD + text + CXX_FD_MAIN, flags, env, cxx=True), 4)


@pytest.mark.parametrize("name", sorted(CXX_STEPPERS))
def test_cxx_steppers_read_a_snapshot(name, tmp_path):
    plan = cache_plan(tmp_path, CXX_FD_HEAD + CXX_STEPPERS[name] + CXX_FD_MAIN, cxx=True)
    assert "snapshot of " in plan and "re-read from a snapshot" in plan, plan


SWEEP_ONCE = PRELUDE + r"""
double f(const double *x) {
  int n = count;
  double *t = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) t[i] = exp(0.1 * x[i % 4] * i);
  double s = 0;
  for (int i = 0; i < n; i++) s += t[i] * t[i] * x[(i + 1) % 4];
  for (int i = 0; i < n; i++) t[i] = 0;
  s += t[n / 2];
  free(t);
  return s;
}
"""


def test_a_sweep_reading_each_element_once_keeps_its_values(tmp_path):
    """A copy would keep as many bytes as the loop's record of the values, and cost a call
    per entry: none is taken (and the gradient is right)."""
    NOT_SERVED["sweep_once"] = SWEEP_ONCE
    try:
        plan = _plan(tmp_path, "sweep_once")
    finally:
        del NOT_SERVED["sweep_once"]
    assert "snapshot of" not in plan, plan


def test_swapped_buffers_are_copied_once_per_step(tmp_path):
    """The CSR product and the reaction term both read u in one step: one copy per step, taken
    at the header of the step loop (where the two buffers trade places)."""
    plan = _plan(tmp_path, "csr_product")
    copies = [line for line in plan.splitlines() if line.startswith("snapshot of ")]
    assert any("at the header of loop" in line for line in copies), plan


# An in-place sweep written as IR (no GVN to forward the stored value): u[i] = f(u[i-1],
# u[i], u[i+1]) over the function's own block. u[i] and u[i+1] are read before this sweep
# writes them; u[i-1] was written one iteration earlier, so no copy taken before the loop
# holds what it reads.
IN_PLACE = DECLS + """
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)

define double @sweep(ptr %x, i64 %n) {
entry:
  %bytes = shl i64 %n, 3
  %u = call ptr @malloc(i64 %bytes)
  call void @llvm.memcpy.p0.p0.i64(ptr %u, ptr %x, i64 %bytes, i1 false)
  %last = add i64 %n, -1
  br label %pre
pre:
  br label %point
point:
  %i = phi i64 [ 1, %pre ], [ %i.next, %point ]
  %pl = getelementptr inbounds double, ptr %u, i64 %i
  %pb = getelementptr i8, ptr %pl, i64 -8
  %behind = load double, ptr %pb, align 8
  %mid = load double, ptr %pl, align 8
  %i.next = add nuw nsw i64 %i, 1
  %pa = getelementptr inbounds double, ptr %u, i64 %i.next
  %ahead = load double, ptr %pa, align 8
  %m2 = fmul double %mid, %mid
  %b2 = fmul double %behind, %ahead
  %v = fadd double %m2, %b2
  store double %v, ptr %pl, align 8
  %done = icmp eq i64 %i.next, %last
  br i1 %done, label %exit, label %point
exit:
  %p0 = getelementptr inbounds double, ptr %u, i64 1
  %r = load double, ptr %p0, align 8
  call void @free(ptr %u)
  ret double %r
}

define double @use(ptr %x, ptr %dx, i64 %n) {
entry:
  %r = call double (ptr, ...) @__enzyme_autodiff(ptr @sweep, ptr @enzyme_dup, ptr %x, ptr %dx, ptr @enzyme_const, i64 %n)
  ret double %r
}
"""


def test_in_place_sweep_reads_ahead_from_the_snapshot_and_keeps_what_it_reads_behind():
    from enzyme_build import llvm
    from enzyme_build.ad.cache import listening_to_plans
    from enzyme_build.ad.driver import differentiate_module
    plans: list[str] = []
    with listening_to_plans(plans.append):
        out = differentiate_module(IN_PLACE)
    llvm.verify(llvm.parse_assembly(out, "snapshots"), generated=True)
    plan = next(p for p in plans if "@diffe_sweep" in p)
    how = {row.split()[1]: row for row in plan.splitlines() if row.startswith("  %point ")}
    assert "re-read from a snapshot" in how["%mid"] and "re-read from a snapshot" in how["%ahead"], plan
    assert "kept" in how["%behind"], plan
    assert "snapshot of %u at the preheader of loop %point" in plan, plan
