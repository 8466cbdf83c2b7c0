/* Doubles moved as 64-bit integers (a generic swap/permute routine over uint64_t). */
#include "hcheck.h"
#include <stdint.h>
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
__attribute__((noinline)) static void permute64(void *dst, const void *src, const int *perm, int n) {
  uint64_t *d = dst;
  const uint64_t *s = src;
  for (int i = 0; i < n; i++) d[i] = s[perm[i]];
}
double f(const double *x, int n) {
  static const int perm[4] = {2, 0, 3, 1};
  double v[4], w[4];
  for (int i = 0; i < n; i++) v[i] = x[i] * x[i];
  permute64(w, v, perm, n);
  double s = 0;
  for (int i = 0; i < n; i++) s += w[i] * (i + 1);
  return s;
}
int main(void) {
  double x[4] = {0.5, -1.5, 1.0, 0.25}, d[4] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, d, enzyme_const, 4);
  /* w = {v2, v0, v3, v1}: weight of v0 is 2, v1 is 4, v2 is 1, v3 is 3 */
  const double wt[4] = {2, 4, 1, 3};
  for (int i = 0; i < 4; i++) hc_near("d", d[i], 2 * x[i] * wt[i], 1e-12);
  return hc_done();
}
