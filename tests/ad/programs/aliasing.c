/* Re-reading memory in the reverse sweep: a callee writing only a local array of its caller
 * re-reads the caller's inputs; a callee writing through a pointer that may alias its inputs
 * must keep what it read. */
#include "adcheck.h"
double __enzyme_autodiff(void *, ...);
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);
extern int enzyme_dup, enzyme_const;

__attribute__((noinline)) void proj(const double *a, const double *b, double *out) {
  out[0] = sin(a[0]) * b[1] + a[1];
  out[1] = a[1] * cos(b[0]) * a[0];
}

/* out is a local array: proj's inputs are stable */
__attribute__((noinline)) double private_out(const double *x, int n) {
  double o[2], s = 0;
  for (int i = 0; i + 1 < n; i++) { proj(x + i, x + n - 2, o); s += o[0] * o[1]; }
  return s;
}

/* out overlaps the inputs of the next calls: each call's reads must be kept */
__attribute__((noinline)) double aliased_out(double *x, int n) {
  double s = 0;
  for (int i = 0; i + 3 < n; i++) { proj(x + i, x + i + 1, x + i + 2); s += x[i + 2] * x[i + 3]; }
  return s;
}
enum { N = 8 };
static double private_f(const double *x, int n) { return private_out(x, n); }
static double aliased_f(const double *x, int n) {
  double y[N];
  for (int i = 0; i < n; i++) y[i] = x[i];
  return aliased_out(y, n);
}

int main(void) {
  double x[N] = {0.3, -0.2, 0.5, 0.1, 0.9, -0.7, 0.4, 0.25}, dx[N] = {0}, fd[N];
  __enzyme_autodiff((void *)private_out, enzyme_dup, x, dx, enzyme_const, N);
  ac_fd_grad(private_f, x, N, fd);
  for (int i = 0; i < N; i++) ac_near("callee writing a private array", dx[i], fd[i], 1e-6);

  double y[N], dy[N] = {0};
  for (int i = 0; i < N; i++) y[i] = x[i];
  __enzyme_autodiff((void *)aliased_out, enzyme_dup, y, dy, enzyme_const, N);
  ac_fd_grad(aliased_f, x, N, fd);
  for (int i = 0; i < N; i++) ac_near("callee writing aliased memory", dy[i], fd[i], 1e-6);

  double ds[N] = {0};
  void *t = __enzyme_augmentfwd((void *)private_out, enzyme_dup, x, ds, enzyme_const, N);
  __enzyme_reverse((void *)private_out, enzyme_dup, x, ds, enzyme_const, N, 1.0, t);
  ac_fd_grad(private_f, x, N, fd);
  for (int i = 0; i < N; i++) ac_near("split: callee writing a private array", ds[i], fd[i], 1e-6);
  return ac_done();
}
