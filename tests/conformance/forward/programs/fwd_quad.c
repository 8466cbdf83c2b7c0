/* A quadrature routine over a callback, differentiated through a wrapper that names the
 * integrand (the pointer is a constant inside the program); forward and reverse. */
#include "hcheck.h"
extern int enzyme_const;
double __enzyme_fwddiff(void *, ...);
double __enzyme_autodiff(void *, ...);
typedef double (*fn)(double, double);
static double integrand(double x, double k) { return sin(k * x) * exp(-x); }
/* Simpson's rule over a callback */
double simpson(fn f, double k, double a, double b, int n) {
  double h = (b - a) / n, s = f(a, k) + f(b, k);
  for (int i = 1; i < n; i++) s += f(a + i * h, k) * (i % 2 ? 4 : 2);
  return s * h / 3;
}
double model(double k) { return simpson(integrand, k, 0.0, 2.0, 64); }
int main(void) {
  double h = 1e-6;
  double fd = (model(1.3 + h) - model(1.3 - h)) / (2 * h);
  hc_near("forward", __enzyme_fwddiff((void *)model, 1.3, 1.0), fd, 1e-6);
  hc_near("reverse", __enzyme_autodiff((void *)model, 1.3), fd, 1e-6);

  return hc_done();
}
