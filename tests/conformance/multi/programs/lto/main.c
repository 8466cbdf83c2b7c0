/* Differentiates a function spanning both TUs (built with -flto in the test). */
#include <stdio.h>
#include <math.h>
double __enzyme_fwddiff(void *, ...);
double __enzyme_autodiff(void *, ...);
double fa(double), fb(double);
double both(double x) { return fa(x) + fb(x); }
int main(void) {
  double want = cos(0.5) * 0.5 + sin(0.5) + 6 * 0.5;
  printf("fwd %g rev %g want %g\n", __enzyme_fwddiff((void *)both, 0.5, 1.0), __enzyme_autodiff((void *)both, 0.5), want);
  return 0;
}
