/* Values that are NaN/inf are skipped: their gradient is zero, not NaN. */
#include "hcheck.h"
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double f(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    double v = log(x[i]);
    if (isnan(v)) continue;
    s += v * v;
  }
  return s;
}
int main(void) {
  double x[3] = {0.5, -0.5, 2.0}, d[3] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, d, enzyme_const, 3);
  hc_near("d0", d[0], 2 * log(0.5) / 0.5, 1e-12);
  hc_near("d1 (skipped)", d[1], 0.0, 0);
  hc_near("d2", d[2], 2 * log(2.0) / 2.0, 1e-12);
  return hc_done();
}
