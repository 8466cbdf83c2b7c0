/* cube' is 40 (forward rule) and 50 (reverse rule) instead of 3x^2. */
#include "hcheck.h"
#include "rule.h"
double __enzyme_fwddiff(void *, ...);
double __enzyme_autodiff(void *, ...);
double f(double x) { return g1(x) + cube(x) + sq(x); }
int main(void) {
  double x = 0.5, common = 2 * sin(x) * cos(x) + 2 * x;
  hc_near("forward", __enzyme_fwddiff((void *)f, x, 1.0), 3 * 40.0 + common, 1e-12);
  hc_near("reverse", __enzyme_autodiff((void *)f, x), 3 * 50.0 + common, 1e-12);
  return hc_done();
}
