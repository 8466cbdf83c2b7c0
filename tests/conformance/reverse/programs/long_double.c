#include "hcheck.h"
double __enzyme_autodiff(void *, ...);
double sq(double x) { long double t = (long double)x * x; return (double)(t * 3); }
int main(void) {
  double g = __enzyme_autodiff((void *)sq, 1.5);
  hc_near("d/dx 3x^2 via long double", g, 9.0, 1e-12);
  return hc_done();
}
