/* Everyday code inside differentiated functions: a variadic logging helper over vfprintf
 * with a call counter, reading a double's sign bit through a union, and a switch whose
 * cases each differentiate a different function. */
#include "adcheck.h"
#include <stdarg.h>
#include <stdint.h>
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

static int nlog = 0;
static void logmsg(const char *fmt, ...) {
  va_list ap;
  nlog++;
  va_start(ap, fmt);
  if (getenv("REALWORLD_VERBOSE")) vfprintf(stderr, fmt, ap);
  va_end(ap);
}

double logged(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    s += x[i] * sin(x[i]);
    logmsg("step %d: s = %g\n", i, s);
  }
  return s * s;
}

double signbits(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    union { double d; uint64_t u; } v = { x[i] * x[(i + 1) % n] };
    int negative = (int)(v.u >> 63);
    s += negative ? -v.d : 2.0 * v.d;
  }
  return s;
}

static double f0(double x) { return x * x; }
static double f1(double x) { return sin(x); }
static double f2(double x) { return exp(x); }
static double f3(double x) { return x * x * x; }

int main(void) {
  enum { N = 5 };
  double x[N] = {0.3, -0.8, 1.1, 0.45, -0.2}, dx[N] = {0};
  int before = nlog;
  __enzyme_autodiff((void *)logged, enzyme_dup, x, dx, enzyme_const, N);
  ac_near("logging runs once per primal step", nlog - before, N, 0);
  for (int i = 0; i < N; i++) {
    double xp[N], xm[N], h = ac_h(x[i]);
    memcpy(xp, x, sizeof x); memcpy(xm, x, sizeof x);
    xp[i] += h; xm[i] -= h;
    ac_near("logged", dx[i], (logged(xp, N) - logged(xm, N)) / (2 * h), 1e-6);
  }
  double t[N] = {0}; t[2] = 1.0;
  ac_near("logged forward", __enzyme_fwddiff((void *)logged, enzyme_dup, x, t, enzyme_const, N), dx[2], 1e-12);

  memset(dx, 0, sizeof dx);
  __enzyme_autodiff((void *)signbits, enzyme_dup, x, dx, enzyme_const, N);
  for (int i = 0; i < N; i++) {
    double xp[N], xm[N], h = ac_h(x[i]);
    memcpy(xp, x, sizeof x); memcpy(xm, x, sizeof x);
    xp[i] += h; xm[i] -= h;
    ac_near("signbits", dx[i], (signbits(xp, N) - signbits(xm, N)) / (2 * h), 1e-6);
  }

  double want[4] = {2 * 0.5, cos(0.5), exp(0.5), 3 * 0.25};
  for (int i = 0; i < 4; i++) {
    double g = 0;
    switch (i) {
      case 0: g = __enzyme_autodiff((void *)f0, 0.5); break;
      case 1: g = __enzyme_autodiff((void *)f1, 0.5); break;
      case 2: g = __enzyme_autodiff((void *)f2, 0.5); break;
      case 3: g = __enzyme_autodiff((void *)f3, 0.5); break;
    }
    ac_near("switch over AD calls", g, want[i], 1e-12);
  }
  return ac_done();
}
