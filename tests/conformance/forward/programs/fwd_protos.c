/* The AD entry points declared with full prototypes (typed function pointers, fixed
 * parameters) instead of variadic (void*, ...), as many Enzyme examples do. */
#include "hcheck.h"
double square(double x) { return x * x * sin(x); }
double __enzyme_fwddiff(double (*)(double), double, double);
double __enzyme_autodiff(void *, double);
float fsq(float x) { return x * x; }
float __enzyme_fwddifff(float (*)(float), float, float);
void vec(const double *x, double *y) { y[0] = x[0] * x[1]; }
void __enzyme_fwddiffv(void (*)(const double *, double *), const double *, const double *, double *, double *);
int main(void) {
  double want = 2 * 0.5 * sin(0.5) + 0.25 * cos(0.5);
  hc_near("typed forward", __enzyme_fwddiff(square, 0.5, 1.0), want, 1e-12);
  hc_near("fixed reverse", __enzyme_autodiff((void *)square, 0.5), want, 1e-12);
  hc_near("typed float", __enzyme_fwddifff(fsq, 1.5f, 1.0f), 3.0, 1e-6);
  double x[2] = {2, 3}, dx[2] = {1, 0}, y[1], dy[1];
  __enzyme_fwddiffv(vec, x, dx, y, dy);
  hc_near("typed pointers", dy[0], 3.0, 1e-15);
  return hc_done();
}
