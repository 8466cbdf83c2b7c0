/* A GSL-style integrand (callback and params in a struct) differentiated through a wrapper
 * with respect to the params, forward and reverse. */
#include "hcheck.h"
extern int enzyme_const, enzyme_dup, enzyme_width;
double __enzyme_fwddiff(void *, ...);
double __enzyme_autodiff(void *, ...);
typedef struct { double k, c; } params;
typedef struct { double (*function)(double x, void *p); void *params; } gsl_function;
static double integrand(double x, void *p) { params *q = p; return sin(q->k * x) * exp(-q->c * x); }
double simpson(const gsl_function *F, double a, double b, int n) {
  double h = (b - a) / n, s = F->function(a, F->params) + F->function(b, F->params);
  for (int i = 1; i < n; i++) s += F->function(a + i * h, F->params) * (i % 2 ? 4 : 2);
  return s * h / 3;
}
/* the user differentiates w.r.t. the params through the struct */
double model(params *p) { gsl_function F = {integrand, p}; return simpson(&F, 0.0, 2.0, 64); }
int main(void) {
  params p = {1.3, 0.7}, dp = {1.0, 0.0}, gp = {0, 0};
  double h = 1e-6; params pp = {1.3 + h, 0.7}, pm = {1.3 - h, 0.7};
  double fd = (model(&pp) - model(&pm)) / (2 * h);
  hc_near("forward", __enzyme_fwddiff((void *)model, &p, &dp), fd, 1e-6);
  __enzyme_autodiff((void *)model, &p, &gp);
  hc_near("reverse", gp.k, fd, 1e-6);
  return hc_done();
}
