/* Active global variables (shadow globals) and small structs passed/returned by value. */
#include "adcheck.h"
double __enzyme_autodiff(void *, ...);

static double buf[4];
double gacc;
__attribute__((noinline)) void fill(double x) { for (int i = 0; i < 4; i++) buf[i] = x * (i + 1); }
double f(double x) {
  fill(x);
  double s = 0;
  for (int i = 0; i < 4; i++) s += buf[i] * buf[i];
  return s + x * x * x;
}
__attribute__((noinline)) void acc_add(double v) { gacc += v * v; }
double h(double x) { gacc = 0; acc_add(x); acc_add(2 * x); return gacc * x; }

typedef struct { double re, im; } cplx;
__attribute__((noinline)) cplx cmul(cplx a, cplx b) { cplx r = {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; return r; }
__attribute__((noinline)) cplx cexp_(cplx a) { cplx r = {exp(a.re) * cos(a.im), exp(a.re) * sin(a.im)}; return r; }
double g(double x) { cplx a = {x, 2 * x}, b = {1 - x, x * x}; cplx c = cexp_(cmul(a, b)); return c.re * c.im; }

int main(void) {
  double xs[] = {0.3, 0.7, 1.1};
  for (int i = 0; i < 3; i++) {
    double x = xs[i];
    ac_near("global array", __enzyme_autodiff((void *)f, x), 60 * x + 3 * x * x, 1e-9);
    ac_near("global scalar", __enzyme_autodiff((void *)h, x), 15 * x * x, 1e-9);
    ac_near("struct by value", __enzyme_autodiff((void *)g, x), AC_FD(g, x), 1e-6);
  }
  return ac_done();
}
