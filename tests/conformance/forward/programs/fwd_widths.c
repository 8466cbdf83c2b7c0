/* Vector mode at odd and large widths (5, 16) and with float arrays (width 4), through a
 * non-inlined helper reading a stack array of active values. */
#include "hcheck.h"
extern int enzyme_dup, enzyme_const, enzyme_width;
typedef struct { double d[5]; } d5;
typedef struct { double d[16]; } d16;
typedef struct { float d[4]; } f4;
d5 __enzyme_fwddiff5(void *, ...);
d16 __enzyme_fwddiff16(void *, ...);
f4 __enzyme_fwddifff4(void *, ...);

__attribute__((noinline)) static double helper(const double *v, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += sin(v[i]) * (i + 1);
  return s;
}
double f(double a, double b) { double v[3] = {a, b, a * b}; return helper(v, 3); }
float g(const float *x, int n) { float s = 0; for (int i = 0; i < n; i++) s += x[i] * x[i] * expf(x[i]); return s; }

int main(void) {
  double a = 0.3, b = -0.8;
  double fa = cos(a) + 3 * cos(a * b) * b, fb = 2 * cos(b) + 3 * cos(a * b) * a;
  d5 r = __enzyme_fwddiff5((void *)f, enzyme_width, 5, a, 1.0, 0.0, 1.0, 2.0, 0.0, b, 0.0, 1.0, 1.0, 0.0, -1.0);
  double w5[5] = {fa, fb, fa + fb, 2 * fa, -fb};
  for (int k = 0; k < 5; k++) hc_near("width 5", r.d[k], w5[k], 1e-12);
  d16 q = __enzyme_fwddiff16((void *)f, enzyme_width, 16,
                             a, 1., 0., 1., 2., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0.5, 3.,
                             b, 0., 1., 1., 0., -1., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0.);
  double w16[16] = {fa, fb, fa + fb, 2 * fa, -fb, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.5 * fa, 3 * fa};
  for (int k = 0; k < 16; k++) hc_near("width 16", q.d[k], w16[k], 1e-12);
  float x[3] = {0.5f, -0.2f, 1.0f}, e[4][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}};
  f4 t = __enzyme_fwddifff4((void *)g, enzyme_width, 4, enzyme_dup, x, e[0], e[1], e[2], e[3], enzyme_const, 3);
  double g0 = (2 * 0.5 + 0.25) * exp(0.5), g1 = (2 * -0.2 + 0.04) * exp(-0.2), g2 = 3 * exp(1.0);
  double wf[4] = {g0, g1, g2, g0 + g1 + g2};
  for (int k = 0; k < 4; k++) hc_near("float width 4", t.d[k], wf[k], 1e-5);
  return hc_done();
}
