/* Calls: non-inlined callees with several call sites, pointer arguments, recursion through
 * memory, printf left alone, user-defined marker globals, inactive functions. */
#include "adcheck.h"
int enzyme_dup = 0, enzyme_const = 0, enzyme_out = 0;   /* user-defined markers */
double __enzyme_autodiff(void *, ...);

__attribute__((noinline)) double sq(double v) { return v * v; }
__attribute__((noinline)) double dot(const double *a, const double *b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}
__attribute__((noinline)) void axpy(double a, const double *x, double *y, int n) {
  for (int i = 0; i < n; i++) y[i] += a * x[i];
}
__attribute__((noinline)) int count_positive(const double *x, int n) {
  int c = 0;
  for (int i = 0; i < n; i++) c += x[i] > 0;
  return c;
}
static int verbose = 0;
__attribute__((noinline)) double model(const double *x, int n) {
  double y[8] = {0};
  axpy(2.0, x, y, n);
  axpy(sq(x[0]), x, y, n);            /* second call site of axpy, active scalar */
  double d = dot(y, x, n) + sq(x[1]) + sq(dot(x, x, n));
  int c = count_positive(x, n);       /* integer result: inactive */
  if (verbose) printf("model %f %d\n", d, c);
  return d * (c + 1);
}
__attribute__((noinline)) double sum_rec(const double *x, int n) {
  return n == 0 ? 0.0 : x[n - 1] * x[n - 1] + sum_rec(x, n - 1) * 0.5;
}
__attribute__((noinline)) double noisy(double x) {
  printf("noisy called with %f\n", x);   /* side effect happens exactly once */
  return x * x * x;
}

enum { N = 5 };
static double model_f(const double *x, int n) { return model(x, n); }
static double sum_rec_f(const double *x, int n) { return sum_rec(x, n); }

int main(void) {
  double x[N], dx[N], fd[N];
  for (int i = 0; i < N; i++) x[i] = 0.4 + 0.3 * i * (i % 2 ? -1 : 1);
  memset(dx, 0, sizeof dx);
  __enzyme_autodiff((void *)model, enzyme_dup, x, dx, enzyme_const, N);
  ac_fd_grad(model_f, x, N, fd);
  for (int i = 0; i < N; i++) ac_near("model", dx[i], fd[i], 1e-6);
  memset(dx, 0, sizeof dx);
  __enzyme_autodiff((void *)sum_rec, enzyme_dup, x, dx, enzyme_const, N);
  ac_fd_grad(sum_rec_f, x, N, fd);
  for (int i = 0; i < N; i++) ac_near("sum_rec", dx[i], fd[i], 1e-6);
  ac_near("noisy", __enzyme_autodiff((void *)noisy, enzyme_out, 2.0), 12.0, 1e-12);
  return ac_done();
}
