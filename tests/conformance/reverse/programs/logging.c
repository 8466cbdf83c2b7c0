/* Variadic logging (a user wrapper over vfprintf, inactive and noinline), snprintf of
 * active values, errno checks, memcpy from a const table. */
#include "hcheck.h"
#include <stdarg.h>
#include <string.h>
#include <errno.h>
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
static int verbose = 0;
static void logmsg(const char *fmt, ...) {
  if (!verbose) return;
  va_list ap; va_start(ap, fmt); vfprintf(stderr, fmt, ap); va_end(ap);
}
__attribute__((noinline)) static void logmsg2(const char *fmt, ...) {
  va_list ap; va_start(ap, fmt); vfprintf(stderr, fmt, ap); va_end(ap);
}
static const double TBL[4] = {0.5, 1.5, -2.0, 3.0};
double f(const double *x, int n) {
  double s = 0;
  double loc[4];
  memcpy(loc, TBL, sizeof loc);
  char buf[64];
  for (int i = 0; i < n; i++) {
    s += loc[i] * x[i] * x[i];
    logmsg("i=%d s=%g x=%g\n", i, s, x[i]);
    snprintf(buf, sizeof buf, "%.3f", s);
  }
  logmsg2("final %g %s\n", s, buf);
  errno = 0;
  double l = log(1 + s * s);
  if (errno != 0) return 0;
  return l + x[0] * x[1] * l;
}
int main(void) {
  enum { N = 4 };
  double x[N] = {0.7, -0.3, 2.0, 0.5}, d[N] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, d, enzyme_const, N);
  for (int i = 0; i < N; i++) { double xp[N], xm[N], h = 1e-6; memcpy(xp, x, sizeof xp); memcpy(xm, x, sizeof xm); xp[i] += h; xm[i] -= h; hc_near("d", d[i], (f(xp, N) - f(xm, N)) / (2 * h), 1e-6); }
  return hc_done();
}
