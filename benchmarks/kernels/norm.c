/* Vector normalization, the Enzyme paper's example: out[i] = in[i] / mag(in), with mag()
 * called inside the loop. Optimization hoists it (restrict pointers), so AD after
 * optimization gives an O(n) gradient while AD before optimization gives O(n^2). */
#include "bench.h"

/* noinline: once inlined, mag is an inner loop, and LLVM hoists loop-invariant calls but
 * not whole inner loops; kept as a call (built with -fno-math-errno so sqrt has no side
 * effect) it is readonly and LICM moves it out of normalize's loop. */
__attribute__((noinline)) double mag(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += x[i] * x[i];
  return sqrt(s);
}

void normalize(double *restrict out, const double *restrict in, int n) {
  for (int i = 0; i < n; i++) out[i] = in[i] / mag(in, n);
}

#define BENCH_KERNEL "norm"
#include "harness/norm.h"
