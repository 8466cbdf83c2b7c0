/* float complex: __mulsc3/__divsc3 and the f-suffixed libm functions (<2 x float> on
 * x86-64), reverse and forward, against central differences of the double formula. */
#include "hcheck.h"
#include <complex.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
float __enzyme_fwddiff(void *, ...);
enum { N = 4 };

__attribute__((noinline)) float f(const float *x, int n) {
  float complex z = x[0] + I * x[1], w = x[2] + I * x[3];
  float complex p = z * w, q = z / w;
  return crealf(p) + cimagf(q) + cabsf(z) + crealf(cexpf(z)) + cimagf(clogf(w)) + crealf(csqrtf(z))
       + cimagf(csinf(w)) + crealf(cpowf(w, z)) + cargf(z);
}
static double fd_(const double *x) {
  double complex z = x[0] + I * x[1], w = x[2] + I * x[3];
  double complex p = z * w, q = z / w;
  return creal(p) + cimag(q) + cabs(z) + creal(cexp(z)) + cimag(clog(w)) + creal(csqrt(z))
       + cimag(csin(w)) + creal(cpow(w, z)) + carg(z);
}

int main(void) {
  float x[N] = {0.61f, -0.37f, 0.83f, 0.42f}, d[N] = {0};
  double xd[N];
  for (int i = 0; i < N; i++) xd[i] = x[i];
  __enzyme_autodiff((void *)f, enzyme_dup, x, d, enzyme_const, N);
  for (int i = 0; i < N; i++) {
    double xp[N], xm[N], h = 1e-6;
    for (int j = 0; j < N; j++) xp[j] = xm[j] = xd[j];
    xp[i] += h; xm[i] -= h;
    double want = (fd_(xp) - fd_(xm)) / (2 * h);
    hc_near("reverse", d[i], want, 1e-4);
    float dx[N] = {0};
    dx[i] = 1;
    hc_near("forward", __enzyme_fwddiff((void *)f, enzyme_dup, x, dx, enzyme_const, N), want, 1e-4);
  }
  return hc_done();
}
