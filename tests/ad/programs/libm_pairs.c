/* sin and cos of one argument (merged into sincos / llvm.sincos under -ffast-math), GNU
 * sincos with out-parameters, Bessel j0/j1/y0/y1, logb, and a posix_memalign workspace. */
#define _GNU_SOURCE
#include "adcheck.h"
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

double rot(double t) { return sin(t) * 3 + cos(t) * sin(t) - cos(t); }
double f_sincos(double x) { double s, c; sincos(x, &s, &c); return s * c + s; }
double f_bessel(double x) { return j0(x) + j1(x) + y0(x) + y1(x) * x + logb(x * 8) * x; }
double workspace(const double *x, int n) {
  double *w = NULL;
  if (posix_memalign((void **)&w, 64, n * sizeof(double)) != 0) return 0;
  for (int i = 0; i < n; i++) w[i] = x[i] * x[i];
  double s = 0;
  for (int i = 0; i < n; i++) s += w[i] * w[i];
  free(w);
  return s;
}

int main(void) {
  double t = 0.83;
  double want_rot = 3 * cos(t) + cos(2 * t) + sin(t);
  ac_near("rot", __enzyme_autodiff((void *)rot, t), want_rot, 1e-12);
  ac_near("rot fwd", __enzyme_fwddiff((void *)rot, t, 1.0), want_rot, 1e-12);
  ac_near("sincos", __enzyme_autodiff((void *)f_sincos, t), cos(2 * t) + cos(t), 1e-12);
  ac_near("sincos fwd", __enzyme_fwddiff((void *)f_sincos, t, 1.0), cos(2 * t) + cos(t), 1e-12);
  /* j0' = -j1, j1' = j0 - j1/x, y0' = -y1, y1' = y0 - y1/x; logb(6.64) = 2 */
  double want_b = -j1(t) + j0(t) - j1(t) / t - y1(t) + (y0(t) - y1(t) / t) * t + y1(t) + 2;
  ac_near("bessel", __enzyme_autodiff((void *)f_bessel, t), want_b, 1e-9);
  ac_near("bessel fwd", __enzyme_fwddiff((void *)f_bessel, t, 1.0), want_b, 1e-9);
  double x[3] = {0.5, -1.5, 2.0}, d[3] = {0};
  __enzyme_autodiff((void *)workspace, enzyme_dup, x, d, enzyme_const, 3);
  for (int i = 0; i < 3; i++) ac_near("posix_memalign", d[i], 4 * x[i] * x[i] * x[i], 1e-12);
  return ac_done();
}
