/* A quadrature routine taking its integrand as a function pointer, differentiated directly
 * with the callback passed as a constant function; forward and reverse. */
#include "hcheck.h"
extern int enzyme_const;
double __enzyme_fwddiff(void *, ...);
double __enzyme_autodiff(void *, ...);
typedef double (*fn)(double, double);
static double integrand(double x, double k) { return sin(k * x) * exp(-x); }
/* Simpson's rule over a callback: the solver is differentiated directly, the callback passed as a constant */
double simpson(fn f, double k, double a, double b, int n) {
  double h = (b - a) / n, s = f(a, k) + f(b, k);
  for (int i = 1; i < n; i++) s += f(a + i * h, k) * (i % 2 ? 4 : 2);
  return s * h / 3;
}
int main(void) {
  double h = 1e-6;
  double fd = (simpson(integrand, 1.3 + h, 0, 2, 64) - simpson(integrand, 1.3 - h, 0, 2, 64)) / (2 * h);
  hc_near("forward", __enzyme_fwddiff((void *)simpson, enzyme_const, integrand, 1.3, 1.0,
                                      enzyme_const, 0.0, enzyme_const, 2.0, enzyme_const, 64), fd, 1e-6);
  hc_near("reverse", __enzyme_autodiff((void *)simpson, enzyme_const, integrand, 1.3,
                                       enzyme_const, 0.0, enzyme_const, 2.0, enzyme_const, 64), fd, 1e-6);
  return hc_done();
}
