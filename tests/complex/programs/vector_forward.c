/* Vector forward mode (enzyme_width 2) through complex multiply, divide and libm calls. */
#include "hcheck.h"
#include <complex.h>
extern int enzyme_dup, enzyme_const, enzyme_width;
typedef struct { double d[2]; } v2;
v2 __enzyme_fwddiff(void *, ...);
double f(const double *x, int n) {
  double complex z = x[0] + I * x[1], w = x[2] + I * x[3];
  return creal(z * w) + cimag(z / w) + cabs(cexp(z)) + creal(csqrt(w)) + cimag(cpow(z, w));
}
int main(void) {
  double x[4] = {0.61, -0.37, 0.83, 0.42};
  double e0[4] = {1, 0, 0, 0}, e1[4] = {0, 0, 1, 0};
  v2 t = __enzyme_fwddiff((void *)f, enzyme_width, 2, enzyme_dup, x, e0, e1, enzyme_const, 4);
  for (int k = 0; k < 2; k++) {
    int i = k ? 2 : 0; double xp[4], xm[4], h = 1e-6;
    for (int j = 0; j < 4; j++) xp[j] = xm[j] = x[j];
    xp[i] += h; xm[i] -= h;
    hc_near("vec", t.d[k], (f(xp, 4) - f(xm, 4)) / (2 * h), 1e-6);
  }
  return hc_done();
}
