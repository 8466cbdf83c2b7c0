/* Callees with several returns called in loops with changing offsets, active scalars, split mode with recursion. */
#include "adcheck.h"
#include <string.h>
extern int enzyme_dup, enzyme_const, enzyme_out;
double __enzyme_autodiff(void *, ...);
void *__enzyme_augmentfwd(void *, ...);
double __enzyme_reverse(void *, ...);
__attribute__((noinline)) double piece(const double *x, int k, double s) {
  if (k % 3 == 0) return s * x[k];
  if (k % 3 == 1) { double t = 0; for (int j = 0; j <= k; j++) t += x[j] * s; return t; }
  return exp(x[k] * 0.1) + s;
}
__attribute__((noinline)) double driver(const double *x, int n, double s) {
  double acc = 0;
  for (int k = 0; k < n; k++) { acc += piece(x, k, s) * piece(x + 1, k % (n - 1), acc * 0.01 + s); if (acc > 1e3) break; }
  return acc;
}
__attribute__((noinline)) double rfact(const double *x, int n) { return n == 0 ? 1.0 : x[n - 1] * rfact(x, n - 1) + sin(x[n - 1]); }
enum { N = 6 };
static double S = 0.8;
static double driver_f(const double *x, int n) { return driver(x, n, S); }
static double rfact_f(const double *x, int n) { return rfact(x, n); }
static void fd(double (*f)(const double *, int), double *x, int n, double *g) {
  for (int i = 0; i < n; i++) { double s = x[i], h = 1e-6; x[i] = s + h; double a = f(x, n); x[i] = s - h; double b = f(x, n); x[i] = s; g[i] = (a - b) / (2 * h); }
}
static double ds_f(double s) { double x[N] = {0.3, 0.5, 0.7, 0.2, 0.9, 0.4}; return driver(x, N, s); }
int main(void) {
  double x[N] = {0.3, 0.5, 0.7, 0.2, 0.9, 0.4}, dx[N] = {0}, g[N];
  double ds = __enzyme_autodiff((void *)driver, enzyme_dup, x, dx, enzyme_const, N, enzyme_out, S);
  fd(driver_f, x, N, g);
  for (int i = 0; i < N; i++) ac_near("driver dx", dx[i], g[i], 1e-6);
  ac_near("driver ds", ds, (ds_f(S + 1e-6) - ds_f(S - 1e-6)) / 2e-6, 1e-6);
  double dx2[N] = {0};
  void *t = __enzyme_augmentfwd((void *)driver, enzyme_dup, x, dx2, enzyme_const, N, enzyme_out, S);
  double ds2 = __enzyme_reverse((void *)driver, enzyme_dup, x, dx2, enzyme_const, N, enzyme_out, S, 1.0, t);
  for (int i = 0; i < N; i++) ac_near("driver split dx", dx2[i], g[i], 1e-6);
  ac_near("driver split ds", ds2, ds, 1e-12);
  double dx3[N] = {0};
  void *t3 = __enzyme_augmentfwd((void *)rfact, x, dx3, N);
  __enzyme_reverse((void *)rfact, x, dx3, N, 1.0, t3);
  fd(rfact_f, x, N, g);
  for (int i = 0; i < N; i++) ac_near("recursive split", dx3[i], g[i], 1e-6);
  return ac_done();
}
