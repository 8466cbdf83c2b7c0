/* Vector normalization with mag() hoisted by hand: what the optimizer does for norm.c, written
 * in the source (so AD before optimization is O(n) too). */
#include "bench.h"

__attribute__((noinline)) double mag(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += x[i] * x[i];
  return sqrt(s);
}

void normalize(double *restrict out, const double *restrict in, int n) {
  double m = mag(in, n);
  for (int i = 0; i < n; i++) out[i] = in[i] / m;
}

#define BENCH_KERNEL "norm_hoisted"
#include "harness/norm.h"
