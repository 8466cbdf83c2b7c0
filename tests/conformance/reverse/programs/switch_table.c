/* The AD call's function chosen by a switch: the optimizer turns the switch into a
 * lookup table of function pointers before AD runs. */
#include "hcheck.h"
double __enzyme_autodiff(void *, ...);
static double f0(double x) { return x * x; }
static double f1(double x) { return sin(x); }
static double f2(double x) { return exp(x); }
static double f3(double x) { return x * x * x; }
int main(void) {
  double want[4] = {2 * 0.5, cos(0.5), exp(0.5), 3 * 0.25};
  for (int i = 0; i < 4; i++) {
    double g = 0;
    switch (i) {
      case 0: g = __enzyme_autodiff((void *)f0, 0.5); break;
      case 1: g = __enzyme_autodiff((void *)f1, 0.5); break;
      case 2: g = __enzyme_autodiff((void *)f2, 0.5); break;
      case 3: g = __enzyme_autodiff((void *)f3, 0.5); break;
    }
    hc_near("d", g, want[i], 1e-12);
  }
  return hc_done();
}
