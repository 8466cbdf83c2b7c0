/* Split mode: tapes that outlive other AD calls, return adjoints, scalar adjoints, callees,
 * caller-owned tapes sized with __enzyme_augmentsize. */
#include "adcheck.h"
extern int enzyme_dup, enzyme_const, enzyme_out, enzyme_allocated, enzyme_tape;
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);
double __enzyme_reverse_d(void *, ...);
double __enzyme_autodiff(void *, ...);
long __enzyme_augmentsize(void *, ...);

__attribute__((noinline)) double inner(const double *x, int i) { return exp(x[i]) * x[(i + 1) % 4]; }
__attribute__((noinline)) double loss(const double *x, double *work, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) { work[i] = inner(x, i); s += work[i] * work[i]; }
  return sqrt(s);
}
__attribute__((noinline)) double scaled(double a, const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += sin(a * x[i]);
  return s * a;
}

/* local float arrays: their shadows live in the reverse piece */
__attribute__((noinline)) double local_arrays(const double *x, int n) {
  double a[4], b[4];
  for (int i = 0; i < 4; i++) a[i] = x[i % n] * (i + 1);
  for (int i = 0; i < 4; i++) b[i] = sin(a[i]) * a[(i + 1) % 4];
  return b[0] + b[1] * b[2] + b[3];
}
__attribute__((noinline)) double calls_local(const double *x, int n) {
  return local_arrays(x, n) * local_arrays(x, n - 1);
}

enum { N = 4 };
static double local_f(const double *x, int n) { return local_arrays(x, n); }
static double calls_local_f(const double *x, int n) { return calls_local(x, n); }
static double loss_f(const double *x, int n) { double w[N]; return loss(x, w, n); }
static double A = 0.7;
static double scaled_f(const double *x, int n) { return scaled(A, x, n); }
static double scaled_a(double a) { double x[N] = {0.1, 0.5, -0.3, 0.9}; return scaled(a, x, N); }

int main(void) {
  double x[N] = {0.1, 0.5, -0.3, 0.9}, dx[N] = {0}, w[N], dw[N] = {0}, fd[N];
  /* two tapes alive at once, with a combined-mode call in between */
  void *t1 = __enzyme_augmentfwd((void *)loss, enzyme_dup, x, dx, enzyme_dup, w, dw, enzyme_const, N);
  double y[N] = {0.2, -0.4, 0.6, 0.3}, dy[N] = {0}, w2[N], dw2[N] = {0};
  void *t2 = __enzyme_augmentfwd((void *)loss, enzyme_dup, y, dy, enzyme_dup, w2, dw2, enzyme_const, N);
  double dxs[N] = {0};
  __enzyme_autodiff((void *)scaled, enzyme_const, 0.7, enzyme_dup, x, dxs, enzyme_const, N);
  ac_fd_grad(scaled_f, x, N, fd);
  for (int i = 0; i < N; i++) ac_near("combined between", dxs[i], fd[i], 1e-6);
  __enzyme_reverse((void *)loss, enzyme_dup, y, dy, enzyme_dup, w2, dw2, enzyme_const, N, 2.0, t2);
  __enzyme_reverse((void *)loss, enzyme_dup, x, dx, enzyme_dup, w, dw, enzyme_const, N, 1.0, t1);
  ac_fd_grad(loss_f, x, N, fd);
  for (int i = 0; i < N; i++) ac_near("split t1", dx[i], fd[i], 1e-6);
  ac_fd_grad(loss_f, y, N, fd);
  for (int i = 0; i < N; i++) ac_near("split t2 (seed 2)", dy[i], 2 * fd[i], 1e-6);

  /* active scalar argument: the reverse call returns its adjoint */
  double dx3[N] = {0};
  void *t3 = __enzyme_augmentfwd((void *)scaled, 0.7, enzyme_dup, x, dx3, enzyme_const, N);
  double da = __enzyme_reverse_d((void *)scaled, 0.7, enzyme_dup, x, dx3, enzyme_const, N, 1.0, t3);
  ac_near("split scalar adjoint", da, AC_FD(scaled_a, 0.7), 1e-6);

  /* caller-owned tape */
  long size = __enzyme_augmentsize((void *)loss, enzyme_dup, x, dx, enzyme_dup, w, dw, enzyme_const, N);
  ac_near("augmentsize positive", size > 0, 1, 0);
  char *buf = malloc(size);
  double dx4[N] = {0};
  __enzyme_augmentfwd((void *)loss, enzyme_allocated, size, enzyme_tape, buf,
                      enzyme_dup, x, dx4, enzyme_dup, w, dw, enzyme_const, N);
  __enzyme_reverse((void *)loss, enzyme_allocated, size, enzyme_tape, buf,
                   enzyme_dup, x, dx4, enzyme_dup, w, dw, enzyme_const, N, 1.0);
  ac_fd_grad(loss_f, x, N, fd);
  for (int i = 0; i < N; i++) ac_near("caller-owned tape", dx4[i], fd[i], 1e-6);
  free(buf);

  double dx5[N] = {0};
  void *t5 = __enzyme_augmentfwd((void *)local_arrays, enzyme_dup, x, dx5, enzyme_const, N);
  __enzyme_reverse((void *)local_arrays, enzyme_dup, x, dx5, enzyme_const, N, 1.0, t5);
  ac_fd_grad(local_f, x, N, fd);
  for (int i = 0; i < N; i++) ac_near("split local arrays", dx5[i], fd[i], 1e-6);
  double dx6[N] = {0};
  __enzyme_autodiff((void *)calls_local, enzyme_dup, x, dx6, enzyme_const, N);
  ac_fd_grad(calls_local_f, x, N, fd);
  for (int i = 0; i < N; i++) ac_near("callee local arrays", dx6[i], fd[i], 1e-6);
  return ac_done();
}
