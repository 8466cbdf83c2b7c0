/* Fused derivative patterns in forward mode: x * sqrt(x) (either order, float and double,
 * sqrt and x with other uses too) and quotients sharing a reciprocal, checked against
 * finite differences. */
#include "fwdcheck.h"
extern int enzyme_dup, enzyme_const;
double __enzyme_fwddiff(void *, ...);
float __enzyme_fwddiff_f(void *, ...);

__attribute__((noinline)) double plummer(double r2) { double t = r2 * sqrt(r2); return 3.0 / t; }
__attribute__((noinline)) double other_uses(double x) { double s = sqrt(x); return s * x + s + 2 * x; }
__attribute__((noinline)) double swapped(double x) { return sqrt(x * x + 1) * (x * x + 1); }
__attribute__((noinline)) float single(float x) { return x * sqrtf(x); }
/* quotients over one denominator, numerator and denominator both varying */
__attribute__((noinline)) double ratios(double x) { double d = x * x + 0.5; return sin(x) / d + x / d - 1 / d; }
/* not the pattern: sqrt of another value */
__attribute__((noinline)) double other_arg(double x) { return x * sqrt(x + 1); }

int main(void) {
  double xs[] = {0.3, 1.0, 2.5, 17.0};
  for (int i = 0; i < 4; i++) {
    double x = xs[i];
    fc_near("plummer", __enzyme_fwddiff((void *)plummer, x, 1.0), FC_FD(plummer, x), 1e-6);
    fc_near("plummer closed form", __enzyme_fwddiff((void *)plummer, x, 1.0), -4.5 / (x * x * sqrt(x)), 1e-12);
    fc_near("other uses", __enzyme_fwddiff((void *)other_uses, x, 2.0), 2.0 * FC_FD(other_uses, x), 1e-6);
    fc_near("swapped", __enzyme_fwddiff((void *)swapped, x, 1.0), FC_FD(swapped, x), 1e-6);
    fc_near("single", __enzyme_fwddiff_f((void *)single, (float)x, 1.0f), 1.5 * sqrt(x), 1e-5);
    fc_near("other arg", __enzyme_fwddiff((void *)other_arg, x, 1.0), FC_FD(other_arg, x), 1e-6);
    fc_near("ratios", __enzyme_fwddiff((void *)ratios, x, 1.0), FC_FD(ratios, x), 1e-6);
  }
  return fc_done();
}
