/* long double at the ABI: an active long double argument and return, a long double
 * array shadow, long double math (sqrtl, expl, sinl). */
#include "hcheck.h"
extern int enzyme_dup, enzyme_const;
long double __enzyme_autodiff(void *, ...);
long double fl(long double x) { return x * x * sinl(x) + expl(x) / sqrtl(x); }
long double fa(const long double *x, int n) { long double s = 0; for (int i = 0; i < n; i++) s += x[i] * x[i] * x[i]; return s; }
int main(void) {
  long double x = 0.7L;
  long double g = __enzyme_autodiff((void *)fl, x);
  long double want = 2 * x * sinl(x) + x * x * cosl(x) + expl(x) / sqrtl(x) - 0.5L * expl(x) / (x * sqrtl(x));
  hc_near("long double scalar", (double)g, (double)want, 1e-12);
  long double a[3] = {0.5L, -1.5L, 2.0L}, da[3] = {0};
  __enzyme_autodiff((void *)fa, enzyme_dup, a, da, enzyme_const, 3);
  for (int i = 0; i < 3; i++) hc_near("long double array", (double)da[i], (double)(3 * a[i] * a[i]), 1e-12);
  return hc_done();
}
