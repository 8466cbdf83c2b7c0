/* Many active scalar arguments: the adjoints come back as a large struct (sret). */
#include "hcheck.h"
typedef struct { double d[8]; } d8;
typedef struct { double a; float b; double c; float d; float e; } mix5;
d8 __enzyme_autodiff(void *, ...);
mix5 __enzyme_autodiff_mix(void *, ...);
double f8(double a, double b, double c, double d, double e, double f, double g, double h) {
  return a * b + c * d * e + sin(f) * g + h * h * a;
}
double f5(double a, float b, double c, float d, float e) { return a * b + c * d * e; }
int main(void) {
  double v[8] = {0.5, -1.5, 1.0, 0.25, 2.0, 0.3, -0.7, 1.2};
  d8 g = __enzyme_autodiff((void *)f8, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
  double want[8] = {v[1] + v[7] * v[7], v[0], v[3] * v[4], v[2] * v[4], v[2] * v[3], cos(v[5]) * v[6], sin(v[5]), 2 * v[7] * v[0]};
  for (int i = 0; i < 8; i++) hc_near("d8", g.d[i], want[i], 1e-12);
  mix5 m = __enzyme_autodiff_mix((void *)f5, 0.5, 2.0f, 1.5, 0.25f, 4.0f);
  hc_near("a", m.a, 2.0, 1e-12); hc_near("b", m.b, 0.5, 1e-6); hc_near("c", m.c, 1.0, 1e-12);
  hc_near("d", m.d, 6.0, 1e-6); hc_near("e", m.e, 0.375, 1e-6);
  return hc_done();
}
