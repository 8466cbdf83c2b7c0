/* memcpy/memmove/memset as real libc calls (what -fno-builtin, -ffreestanding or a
 * call through a pointer to memcpy leave in the IR). Build with -fno-builtin. */
#include "hcheck.h"
#include <string.h>
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double f(const double *x, int n) {
  double a[8], b[8];
  memset(b, 0, sizeof b);
  memcpy(a, x, n * sizeof(double));
  memmove(a + 1, a, (n - 1) * sizeof(double));
  for (int i = 0; i < n; i++) b[i] += a[i] * a[i];
  double s = 0;
  for (int i = 0; i < n; i++) s += b[i] * (i + 1);
  return s;
}
int main(void) {
  double x[4] = {0.5, -1.5, 1.0, 0.25}, d[4] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, d, enzyme_const, 4);
  /* a = {x0, x0, x1, x2}: s = x0^2 (1 + 2) + x1^2 3 + x2^2 4 */
  const double w[4] = {3, 3, 4, 0};
  for (int i = 0; i < 4; i++) hc_near("d", d[i], 2 * x[i] * w[i], 1e-12);
  return hc_done();
}
