/* libm functions with pointer out-params: modf (becomes llvm.modf at -O2) and frexp. */
#include "hcheck.h"
double __enzyme_autodiff(void *, ...);
double f(double x) {
  double ip;
  double fr = modf(x * 5, &ip);   /* 4.15 → fr = 0.15, ip = 4; d fr/dx = 5 */
  int e;
  double m = frexp(x * 3, &e);    /* 2.49 = 0.6225 * 2^2; d m/dx = 3 / 4 */
  return fr * ip + fr * fr + m * e;
}
int main(void) {
  double x = 0.83;
  double g = __enzyme_autodiff((void *)f, x);
  double fr = x * 5 - 4;
  hc_near("d", g, 5 * 4 + 2 * fr * 5 + 0.75 * 2, 1e-9);
  return hc_done();
}
