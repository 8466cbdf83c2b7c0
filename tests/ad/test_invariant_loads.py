"""Values loaded in a loop from memory the loop does not write, through an address it does
not change, kept once per execution of the loop rather than once per iteration.

The class (GMM written with std::vector scratch, measured 3.3x its primal where the C
layout was 2.2x): `for (j...) out[j] += l[k++] * x[i]` with `x` and `out` the function's own
heap blocks -- `new`'d by std::vector, or null while empty -- and `l` a pointer argument.
The optimizer left the load of `x[i]` in the inner loop, and the cache planner kept it
once per iteration (9 MB of tape for ADBench's GMM) because it took the vectors' storage
for captured (merged with null by a phi) and `new` made through `invoke` for no
allocation. Such a load has the same value in every iteration of one execution of the
loop, so one copy taken when the loop is left serves them all (`cache._invariant_inside`).

Members: std::vector scratch in a GMM step and in a triangular product, `new[]` and
std::unique_ptr buffers, a vector of rows; C scratch buffers malloc'd or NULL, an
invariant expression feeding a math call, a value invariant in the innermost of three
loops; and the cases where the value does change inside the loop, which must stay per
iteration: a helper whose output row is its input row (std::vector and C). Reverse mode
is checked against forward mode and central differences at -O0, -O2 and with AD before
optimization; the cache plan shows the load kept once per execution of its loop.
"""
from __future__ import annotations

import pytest

from ad_helpers import CXX_FD_HEAD, CXX_FD_MAIN, FD_HEAD, LEVELS, cache_plan, check_gradients, fd_main

# sizes known only at run time: loops the optimizer cannot unroll away
SIZES = "static volatile int dim = 4, reps = 3;\n"

C_PROGRAMS = {
    "scratch_or_null": r"""
__attribute__((noinline)) double f(const double *x) {
  int d = dim;
  double *xc = d ? malloc(d * sizeof(double)) : NULL, *qx = d ? malloc(d * sizeof(double)) : NULL;
  double s = 0;
  for (int r = 0; r < reps; r++) {
    for (int i = 0; i < d; i++) xc[i] = x[i] - 0.25 * r;
    for (int i = 0; i < d; i++) qx[i] = (1.0 + 0.5 * i) * xc[i];
    int k = 0;
    for (int i = 0; i < d; i++)
      for (int j = i + 1; j < d; j++) qx[j] += x[k++ & 3] * xc[i];
    for (int i = 0; i < d; i++) s += qx[i] * qx[i];
  }
  free(xc); free(qx);
  return s;
}""",
    "invariant_expression": r"""
__attribute__((noinline)) double f(const double *x) {
  int n = dim;
  double *a = n > 0 ? malloc(n * sizeof(double)) : NULL, *b = n > 0 ? calloc(n, sizeof(double)) : NULL;
  for (int i = 0; i < n; i++) a[i] = sin(x[i]);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) b[j] += exp(0.5 * a[i]) * a[i] * x[j];
  double s = 0;
  for (int j = 0; j < n; j++) s += b[j] * b[j];
  free(a); free(b);
  return s;
}""",
    "three_deep": r"""
__attribute__((noinline)) double f(const double *x) {
  int n = dim;
  double *u = n ? malloc(n * sizeof(double)) : NULL, *v = n ? malloc(n * sizeof(double)) : NULL;
  double s = 0;
  for (int t = 0; t < 2; t++) {
    for (int i = 0; i < n; i++) { u[i] = x[i] * (1.0 + t); v[i] = 0; }
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++)
        for (int k = 0; k <= j; k++) v[k] += u[i] * u[j] * x[k];
    for (int i = 0; i < n; i++) s += sin(v[i]);
  }
  free(u); free(v);
  return s;
}""",
    "overlapping_helper": r"""
static void tri(double *out, const double *xc, int d) {
  for (int i = 0; i < d; i++)
    for (int j = i + 1; j < d; j++) out[j] += 0.5 * xc[i] * xc[j - 1];
}
__attribute__((noinline)) double f(const double *x) {
  double *w = malloc(8 * sizeof(double));
  for (int i = 0; i < 8; i++) w[i] = x[i % 4] * (1 + i);
  tri(w + 1, w, dim + 2);
  double s = 0;
  for (int i = 0; i < 8; i++) s += w[i] * w[i];
  free(w);
  return s;
}""",
}

CXX_PROGRAMS = {
    "gmm_like": r"""
#include <algorithm>
#include <numeric>
#include <vector>
static void qtimesx(int d, const double *qdiag, const double *ltri, const std::vector<double> &x,
                    std::vector<double> &out) {
  for (int i = 0; i < d; i++) out[i] = qdiag[i] * x[i];
  int lp = 0;
  for (int i = 0; i < d; i++)
    for (int j = i + 1; j < d; j++) out[j] += ltri[lp++ & 3] * x[i];
}
__attribute__((noinline)) double f(const double *x) {
  const int d = dim, k = reps;
  const double *icf = x;       // diagonal then strict lower part, shared by the components
  std::vector<double> qdiags(d), xcentered(d), qxcentered(d), pts(d * k);
  std::transform(icf, icf + d, qdiags.begin(), [](double v) { return std::exp(0.1 * v); });
  for (int i = 0; i < d * k; i++) pts[i] = 0.3 * i - 0.2;
  double s = 0;
  for (int ix = 0; ix < k; ix++) {
    std::transform(pts.begin() + ix * d, pts.begin() + ix * d + d, x, xcentered.begin(), std::minus<double>());
    qtimesx(d, qdiags.data(), icf, xcentered, qxcentered);
    s += std::inner_product(qxcentered.begin(), qxcentered.end(), qxcentered.begin(), 0.0);
  }
  return s;
}""",
    "vector_scratch": r"""
#include <vector>
#include <numeric>
static void qtimesx(int d, const double *l, const std::vector<double> &x, std::vector<double> &out) {
  for (int i = 0; i < d; i++) out[i] = (1.0 + i) * x[i];
  int k = 0;
  for (int i = 0; i < d; i++)
    for (int j = i + 1; j < d; j++) out[j] += l[k++ & 3] * x[i];
}
__attribute__((noinline)) double f(const double *x) {
  const int d = dim;
  const double *l = x;
  std::vector<double> xc(d), qx(d);
  double s = 0;
  for (int r = 0; r < reps; r++) {
    for (int i = 0; i < d; i++) xc[i] = x[i] - 0.5 * r;
    qtimesx(d, l, xc, qx);
    s += std::inner_product(qx.begin(), qx.end(), qx.begin(), 0.0);
  }
  return s;
}""",
    "new_arrays": r"""
#include <memory>
__attribute__((noinline)) double f(const double *x) {
  const int d = dim;
  double *xc = new double[d];
  std::unique_ptr<double[]> qx(new double[d]);
  double s = 0;
  for (int r = 0; r < reps; r++) {
    for (int i = 0; i < d; i++) { xc[i] = x[i] * (1.0 + r); qx[i] = 0; }
    int k = 0;
    for (int i = 0; i < d; i++)
      for (int j = i; j < d; j++) qx[j] += x[k++ & 3] * std::sin(xc[i]);
    for (int i = 0; i < d; i++) s += qx[i] * qx[i];
  }
  delete[] xc;
  return s;
}""",
    "vector_rows": r"""
#include <vector>
__attribute__((noinline)) double f(const double *x) {
  const int n = dim, m = reps;
  std::vector<std::vector<double>> rows(m, std::vector<double>(n));
  std::vector<double> acc(n);
  for (int r = 0; r < m; r++)
    for (int i = 0; i < n; i++) rows[r][i] = x[i] * (r + 1);
  for (int r = 0; r < m; r++)
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) acc[j] += rows[r][i] * x[j];
  double s = 0;
  for (double v : acc) s += v * v;
  return s;
}""",
    "vector_in_place": r"""
#include <vector>
static void mix(int d, const double *l, const std::vector<double> &x, std::vector<double> &out) {
  int k = 0;
  for (int i = 0; i < d; i++)
    for (int j = 0; j < d; j++) out[j] += l[k++ & 3] * x[i];
}
__attribute__((noinline)) double f(const double *x) {
  const int d = dim;
  std::vector<double> v(d), w(d);
  for (int i = 0; i < d; i++) { v[i] = x[i]; w[i] = 0.5 * x[i]; }
  mix(d, x, v, v);     // the row read is the row written: x[i] changes when j == i
  mix(d, x, v, w);
  double s = 0;
  for (int i = 0; i < d; i++) s += v[i] * w[i];
  return s;
}""",
}


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(C_PROGRAMS))
def test_c_invariant_loads(tmp_path, name, level):
    flags, env = LEVELS[level]
    check_gradients(tmp_path, FD_HEAD + SIZES + C_PROGRAMS[name] + fd_main(4), flags, env)


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(CXX_PROGRAMS))
def test_cxx_invariant_loads(tmp_path, name, level):
    flags, env = LEVELS[level]
    check_gradients(tmp_path, CXX_FD_HEAD + SIZES + CXX_PROGRAMS[name] + CXX_FD_MAIN, flags, env, cxx=True)


def _loads_at_fixed_addresses(workdir, text: str) -> dict[str, str]:
    """Build `text` at -O2 keeping its files; for each load of the gradient's input whose
    one-block loop does not change its address (the address is computed outside the
    loop), how the cache plan serves it: {value: plan entry}."""
    import os
    from enzyme_build.ir.model import parse_module
    plan = cache_plan(workdir, text, cxx=True)
    with open(os.path.join(str(workdir), "keep", "p.ad", "ad-input.ll")) as fh:
        module = parse_module(fh.read())
    fn = module.functions["_Z1fPKd"]
    served = {}
    for block in fn.blocks:
        if block.label not in block.terminator.targets:
            continue
        made_here = {inst.result for inst in block.instructions if inst.result}
        for inst in block.instructions:
            if inst.opcode == "load" and inst.operands[0][1].startswith("%") and inst.operands[0][1] not in made_here:
                entry = [line.split(None, 3)[3] for line in plan.splitlines()
                         if line.split()[:3] == [f"%{block.label}", inst.result, "load"]]
                served[inst.result] = entry[0] if entry else "not read by the reverse sweep"
    return served


@pytest.mark.parametrize("name", ["gmm_like", "vector_scratch"])
def test_vector_element_kept_once_per_loop(tmp_path, name):
    """The centred vector's element read in the triangular product's inner loop (its
    address fixed in that loop, the loop writing only the other vector) is kept once per
    execution of the loop, not once per iteration."""
    served = _loads_at_fixed_addresses(tmp_path, CXX_FD_HEAD + SIZES + CXX_PROGRAMS[name] + CXX_FD_MAIN)
    kept = {v: how for v, how in served.items() if how.startswith("kept")}
    assert served and not kept, served
    assert any(how.startswith("loop-invariant") for how in served.values()), served


def test_row_written_in_place_stays_per_iteration(tmp_path):
    """`mix(d, l, v, v)`: the row read is the row written, so x[i] changes when j == i and
    the load stays per iteration (the gradients are checked in test_cxx_invariant_loads)."""
    served = _loads_at_fixed_addresses(tmp_path, CXX_FD_HEAD + SIZES + CXX_PROGRAMS["vector_in_place"] + CXX_FD_MAIN)
    assert [how.split(":")[0] for how in served.values()] == ["kept"], served
