"""qsort of active data (ad/qsort.py).

The class: C code that sorts values carrying derivatives with libc's qsort and a comparator
-- an order statistic or median of computed values, records {key, weight} sorted by key for
a rank-weighted loss, records {int id, double v} sorted by id, two sorts with different
comparators and element sizes in one function. libc's qsort has no body, so every such
program was refused ("cannot differentiate through 'qsort'"). A call with a constant element
size and comparator now goes to a heapsort defined in IR for that pair. Checked in reverse
and forward mode against central differences (keys kept apart, so the steps never reorder
them) at -O0, -O2 and with AD before optimization; the primal's results equal libc's.
"""
from __future__ import annotations

import pytest

from ad_helpers import FD_HEAD, LEVELS, built_and_run, check_fd_rows, fd_main, fd_rows

PROGRAMS = {
    # the median and an L-estimator of computed values (a copy sorted as doubles)
    "order_statistics": r"""
static int by_value(const void *a, const void *b) {
  double u = *(const double *)a, v = *(const double *)b;
  return (u > v) - (u < v);
}
double f(const double *x) {
  double v[9];
  for (int i = 0; i < 9; i++) v[i] = x[i % 4] * (1.0 + 0.5 * i) + 0.9 * i * (i % 2 ? 1 : -1);
  qsort(v, 9, sizeof v[0], by_value);
  double s = v[4];
  for (int i = 0; i < 9; i++) s += 0.1 * (i + 1) * v[i] * v[i];
  return s;
}
""",
    # records sorted by a computed key, weights summed in rank order
    "rank_weighted": r"""
typedef struct { double key; double w; } Item;
static int by_key(const void *a, const void *b) {
  double ka = ((const Item *)a)->key, kb = ((const Item *)b)->key;
  return (ka > kb) - (ka < kb);
}
double f(const double *x) {
  int n = 12;
  Item *it = malloc(n * sizeof(Item));
  for (int i = 0; i < n; i++) { it[i].key = x[i % 4] + 0.37 * i * (i % 3 ? 1 : -1); it[i].w = sin(x[(i + 1) % 4]) * (i + 1); }
  qsort(it, n, sizeof(Item), by_key);
  double s = 0, cum = 0;
  for (int k = 0; k < n; k++) { cum += it[k].w; s += it[k].key * cum / (k + 1.0); }
  free(it);
  return s;
}
""",
    # {int id, double v} records sorted by their integer id, then two sorts in one function
    "ids_then_values": r"""
typedef struct { int id; double v; } Rec;
static int by_id(const void *a, const void *b) { return ((const Rec *)a)->id - ((const Rec *)b)->id; }
static int descending(const void *a, const void *b) {
  double u = *(const double *)a, v = *(const double *)b;
  return (u < v) - (u > v);
}
double f(const double *x) {
  Rec r[10];
  for (int i = 0; i < 10; i++) { r[i].id = (i * 7) % 10; r[i].v = x[i % 4] * x[(i + 1) % 4] + i; }
  qsort(r, 10, sizeof(Rec), by_id);
  double d[10], s = 0;
  for (int i = 0; i < 10; i++) { d[i] = r[i].v * (i + 1) - 1.3 * i * i; s += r[i].v * (i + 1); }
  qsort(d, 10, sizeof(double), descending);
  for (int i = 0; i < 10; i++) s += tanh(0.1 * d[i]) * (i + 2);
  return s;
}
""",
}

X = (0.6, -1.3, 1.7, 0.8)


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_qsort(name, level, tmp_path):
    flags, env = LEVELS[level]
    text = FD_HEAD + PROGRAMS[name] + fd_main(x=X, h=1e-7)
    check_fd_rows(fd_rows(tmp_path, text, flags, env), 4)


PRIMAL = r"""
#include <stdio.h>
#include <stdlib.h>
extern int enzyme_dup;
void __enzyme_autodiff(void *, ...);
typedef struct { int id; double v; } Rec;
static int by_id(const void *a, const void *b) { return ((const Rec *)a)->id - ((const Rec *)b)->id; }
double sorted_sum(Rec *r, int n) {
  qsort(r, n, sizeof(Rec), by_id);
  double s = 0;
  for (int i = 0; i < n; i++) s += r[i].v * (i + 1);
  return s;
}
int main(void) {
  enum { N = 1000 };
  static Rec r[N], dr[N];
  for (int j = 0; j < N; j++) { r[j].id = (int)((j * 7919L) % N); r[j].v = 0.001 * j; }
  __enzyme_autodiff((void *)sorted_sum, enzyme_dup, r, dr, N);
  for (int i = 0; i < N; i++) {   /* sorted by id; each record kept its value */
    long j = (long)(r[i].v * 1000 + 0.5);
    if (r[i].id != i || (j * 7919L) % N != i) return 2;
  }
  for (int j = 0; j < N; j++)     /* input record j's adjoint: its rank + 1 */
    if (dr[j].v != (double)((j * 7919L) % N + 1)) return 3;
  printf("%d %d %g %g\n", r[0].id, r[N - 1].id, dr[0].v, dr[1].v);
  return 0;
}
"""


def test_qsort_sorts_large_arrays(tmp_path):
    """The heapsort sorts (1000 records whose ids are a permutation) and each input record's
    adjoint is its rank + 1, back where the record came from."""
    out = built_and_run(tmp_path, PRIMAL)
    assert out.returncode == 0, (out.returncode, out.stdout, out.stderr)
    assert out.stdout.split() == ["0", "999", "1", "920"], out.stdout
