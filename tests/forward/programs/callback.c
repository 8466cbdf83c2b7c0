/* Solvers taking their integrand as a function-pointer argument, differentiated directly
 * with the callback passed enzyme_const: the derivative comes from a copy of the solver in
 * which the calls through the parameter are direct. Two integrands, forward and reverse. */
#include "fwdcheck.h"
double __enzyme_fwddiff(void *, ...);
double __enzyme_autodiff(void *, ...);
typedef double (*fn)(double, double);
static double damped(double x, double k) { return sin(k * x) * exp(-x); }
static double gauss(double x, double k) { return exp(-k * x * x); }
double simpson(fn f, double k, double a, double b, int n) {
  double h = (b - a) / n, s = f(a, k) + f(b, k);
  for (int i = 1; i < n; i++) s += f(a + i * h, k) * (i % 2 ? 4 : 2);
  return s * h / 3;
}
/* Newton's method on g(x) = f(x, k) - 0.5 with a fixed number of steps and a derivative callback */
double newton(fn f, fn df, double k, double x0) {
  double x = x0;
  for (int i = 0; i < 30; i++) x -= (f(x, k) - 0.5) / df(x, k);
  return x;
}
static double gauss_dx(double x, double k) { return -2 * k * x * exp(-k * x * x); }
static double sd(double k) { return simpson(damped, k, 0, 2, 64); }
static double sg(double k) { return simpson(gauss, k, 0, 2, 64); }
static double nw(double k) { return newton(gauss, gauss_dx, k, 0.5); }

int main(void) {
  double k = 1.3;
  fc_near("forward damped", __enzyme_fwddiff((void *)simpson, enzyme_const, damped, k, 1.0, enzyme_const, 0.0,
                                             enzyme_const, 2.0, enzyme_const, 64), FC_FD(sd, k), 1e-6);
  fc_near("reverse damped", __enzyme_autodiff((void *)simpson, enzyme_const, damped, k, enzyme_const, 0.0,
                                              enzyme_const, 2.0, enzyme_const, 64), FC_FD(sd, k), 1e-6);
  fc_near("forward gauss", __enzyme_fwddiff((void *)simpson, enzyme_const, gauss, k, 1.0, enzyme_const, 0.0,
                                            enzyme_const, 2.0, enzyme_const, 64), FC_FD(sg, k), 1e-6);
  fc_near("forward newton", __enzyme_fwddiff((void *)newton, enzyme_const, gauss, enzyme_const, gauss_dx, k, 1.0,
                                             0.5, 0.0), FC_FD(nw, k), 1e-6);
  return fc_done();
}
