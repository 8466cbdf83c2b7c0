/* The library's __muldc3/__divdc3 keep the runtime's C99 Annex G results for infinite and
 * NaN operands (the program also differentiates, so the library is linked in). */
#include "hcheck.h"
#include <complex.h>
#define MK(x, y) __builtin_complex((double)(x), (double)(y))
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double f(double a, double b, double c, double d) {
  double complex z = a + I * b, w = c + I * d;
  return creal(z * w) + cimag(z / w);
}
static void check(const char *what, double complex got, double want_re, double want_im) {
  hc_near(what, isinf(creal(got)) ? 1 : isnan(creal(got)) ? 2 : creal(got),
          isinf(want_re) ? 1 : isnan(want_re) ? 2 : want_re, 0);
  hc_near(what, isinf(cimag(got)) ? 1 : isnan(cimag(got)) ? 2 : cimag(got),
          isinf(want_im) ? 1 : isnan(want_im) ? 2 : want_im, 0);
}
int main(void) {
  volatile double inf = INFINITY, nan_ = NAN, one = 1, zero = 0;
  double complex zi = MK(inf, nan_), w1 = MK(one, zero);
  check("inf*1", zi * w1, INFINITY, NAN);             /* infinite, not NaN + i NaN */
  check("1/0", w1 / MK(zero, zero), INFINITY, NAN);
  check("1/inf", w1 / MK(inf, inf), 0, 0);
  /* and the derivative: d/da (re(z w) + im(z / w)) = c + (-d)/(c^2+d^2) */
  double g = __enzyme_autodiff((void *)f, 0.3, enzyme_const, 0.5, enzyme_const, 1.5, enzyme_const, 2.0);
  hc_near("d/da", g, 1.5 - 2.0 / (1.5 * 1.5 + 4.0), 1e-12);
  return hc_done();
}
