/* Vector normalization in one function without restrict: the sum of squares and its inverse
 * square root computed once, then a multiply per element (no helper, no division). */
#include "bench.h"

void normalize(double *out, const double *in, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += in[i] * in[i];
  double inv = 1.0 / sqrt(s);
  for (int i = 0; i < n; i++) out[i] = in[i] * inv;
}

#define BENCH_KERNEL "norm_inline"
#include "harness/norm.h"
