/* sin and cos of the same argument: with -ffast-math (or -fno-math-errno) the optimizer
 * may merge them into sincos / llvm.sincos. Also the GNU sincos call itself, logb and
 * the Bessel functions j0, j1, y0. */
#define _GNU_SOURCE
#include "hcheck.h"
double __enzyme_autodiff(void *, ...);
double rot(double t) { return sin(t) * 3 + cos(t) * sin(t) - cos(t); }
double f_sincos(double x) { double s, c; sincos(x, &s, &c); return s * c + s; }
double f_more(double x) { return j0(x) + j1(x) + y0(x) + logb(x * 8) * x; }
int main(void) {
  double t = 0.83;
  hc_near("rot", __enzyme_autodiff((void *)rot, t), 3 * cos(t) + cos(2 * t) + sin(t), 1e-12);

  hc_near("sincos", __enzyme_autodiff((void *)f_sincos, t), cos(2 * t) + cos(t), 1e-12);
  /* j0' = -j1, j1' = j0 - j1/x, y0' = -y1; logb is piecewise constant (logb(6.64) = 2) */
  hc_near("bessel+logb", __enzyme_autodiff((void *)f_more, t), -j1(t) + j0(t) - j1(t) / t - y1(t) + 2, 1e-9);

  return hc_done();
}
