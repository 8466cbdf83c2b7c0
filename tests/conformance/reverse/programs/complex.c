/* C99 complex arithmetic: multiplication lowers to __muldc3 at -O0 (and for inf/nan
 * checks at -O2), division to __divdc3; cabs, cexp, csqrt are libm calls. */
#include "hcheck.h"
#include <complex.h>
#include <string.h>
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
enum { N = 4 };
double f(const double *x, int n) {
  double complex z = 0;
  for (int i = 0; i + 1 < n; i += 2) { double complex w = x[i] + I * x[i + 1]; z = z * w + w * w; }
  double complex q = z / (1.0 + x[0] * I);
  return creal(q) + cimag(z) * 0.5 + cabs(z) + creal(cexp(z)) + cimag(csqrt(z));
}
int main(void) {
  double x[N] = {0.31, -0.47, 0.83, 0.12}, d[N] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, d, enzyme_const, N);
  for (int i = 0; i < N; i++) {
    double xp[N], xm[N], h = hc_h(x[i]);
    memcpy(xp, x, sizeof xp); memcpy(xm, x, sizeof xm);
    xp[i] += h; xm[i] -= h;
    hc_near("d", d[i], (f(xp, N) - f(xm, N)) / (2 * h), 1e-6);
  }
  return hc_done();
}
