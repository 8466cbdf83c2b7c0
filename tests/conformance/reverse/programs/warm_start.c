/* A warm start kept in a static: the previous call's result seeds this call's iteration.
 * The value read from the static is a constant of this call, so repeated gradients at
 * the same x must agree; adjoints must not carry over between calls through the static's
 * shadow. */
#include "hcheck.h"
double __enzyme_autodiff(void *, ...);
double f(double x) {
  static double prev = 0.0;
  double y = 0.5 * prev + x * x; /* prev from the last call: constant here */
  prev = y;
  return y * x;
}
int main(void) {
  double x = 1.5;
  for (int k = 0; k < 3; k++) {
    /* y = 0.5 prev + x^2 with prev constant: d(yx)/dx = 2x^2 + y */
    static double prev_model = 0.0;
    double y = 0.5 * prev_model + x * x;
    double g = __enzyme_autodiff((void *)f, x);
    hc_near("gradient with a warm start", g, 2 * x * x + y, 1e-12);
    prev_model = y;
  }
  return hc_done();
}
