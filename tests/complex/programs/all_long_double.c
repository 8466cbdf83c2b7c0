/* Every long double entry of the complex library (x86's 80-bit `long double _Complex`:
 * __mulxc3, __divxc3, cexpl, …), inside a double function, in reverse, forward and split
 * mode, against central differences; closed forms for z*w, cexp and cabs. */
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
  long double complex z = x[0] + I * (long double)x[1], w = x[2] + I * (long double)x[3];
  long double complex p = z * w, q = z / w;
  long double s = creall(p) + 0.5L * cimagl(q) + cabsl(z) + cargl(w) + creall(conjl(z) * w);
  s += creall(cexpl(z)) + cimagl(clogl(w)) + creall(clogl(z)) + creall(csqrtl(z)) + cimagl(csqrtl(w));
  s += creall(cpowl(z, w)) + cimagl(csinl(z)) + creall(ccosl(w)) + creall(ctanl(z)) + cimagl(csinhl(w));
  s += creall(ccoshl(z)) + cimagl(ctanhl(w)) + creall(z) * cimagl(w);
  s += creall(casinhl(z)) + cimagl(casinl(w)) + creall(cacosl(z)) + cimagl(cacoshl(w));
  s += creall(catanhl(z)) + cimagl(catanl(w)) + creall(cprojl(z));
  return (double)s;
}
/* closed forms: d/dx0 of creal(z*w) = x2, d/dx1 = -x3 */
__attribute__((noinline)) double g(const double *x, int n) {
  long double complex z = x[0] + I * (long double)x[1], w = x[2] + I * (long double)x[3];
  return (double)(creall(z * w) + creall(cexpl(z)) + cabsl(w));
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
