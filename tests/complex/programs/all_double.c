/* Every double-precision entry of the complex library, in reverse, forward and split mode,
 * against central differences; closed forms for z*w, cexp and cabs. */
#include "hcheck.h"
#include <complex.h>
#include <string.h>
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);
enum { N = 4 };

__attribute__((noinline)) double f(const double *x, int n) {
  double complex z = x[0] + I * x[1], w = x[2] + I * x[3];
  double complex p = z * w, q = z / w;
  double s = creal(p) + 0.5 * cimag(q) + cabs(z) + carg(w) + creal(conj(z) * w);
  s += creal(cexp(z)) + cimag(clog(w)) + creal(clog(z)) + creal(csqrt(z)) + cimag(csqrt(w));
  s += creal(cpow(z, w)) + cimag(csin(z)) + creal(ccos(w)) + creal(ctan(z)) + cimag(csinh(w));
  s += creal(ccosh(z)) + cimag(ctanh(w)) + creal(z) * cimag(w);
  return s;
}
/* closed forms: d/dx0 of creal(z*w) = x2, d/dx1 = -x3 */
__attribute__((noinline)) double g(const double *x, int n) {
  double complex z = x[0] + I * x[1], w = x[2] + I * x[3];
  return creal(z * w) + creal(cexp(z)) + cabs(w);
}

static void fd(double (*fn)(const double *, int), const double *x, double *want) {
  for (int i = 0; i < N; i++) {
    double xp[N], xm[N], h = hc_h(x[i]);
    memcpy(xp, x, sizeof xp); memcpy(xm, x, sizeof xm);
    xp[i] += h; xm[i] -= h;
    want[i] = (fn(xp, N) - fn(xm, N)) / (2 * h);
  }
}

int main(void) {
  double x[N] = {0.61, -0.37, 0.83, 0.42}, want[N];
  fd(f, x, want);
  double d[N] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, d, enzyme_const, N);
  for (int i = 0; i < N; i++) hc_near("reverse", d[i], want[i], 1e-6);
  for (int i = 0; i < N; i++) {
    double dx[N] = {0};
    dx[i] = 1;
    hc_near("forward", __enzyme_fwddiff((void *)f, enzyme_dup, x, dx, enzyme_const, N), want[i], 1e-6);
  }
  double ds[N] = {0};
  void *tape = __enzyme_augmentfwd((void *)f, enzyme_dup, x, ds, enzyme_const, N);
  __enzyme_reverse((void *)f, enzyme_dup, x, ds, enzyme_const, N, 2.0, tape);
  for (int i = 0; i < N; i++) hc_near("split", ds[i], 2 * want[i], 1e-6);

  double dg[N] = {0};
  __enzyme_autodiff((void *)g, enzyme_dup, x, dg, enzyme_const, N);
  double r = hypot(x[2], x[3]);
  hc_near("closed x0", dg[0], x[2] + exp(x[0]) * cos(x[1]), 1e-12);
  hc_near("closed x1", dg[1], -x[3] - exp(x[0]) * sin(x[1]), 1e-12);
  hc_near("closed x2", dg[2], x[0] + x[2] / r, 1e-12);
  hc_near("closed x3", dg[3], -x[1] + x[3] / r, 1e-12);
  return hc_done();
}
