/* A result written through an argument at the end of the function (`*out = s`) is undone
 * while the reverse sweep re-reads the inputs and written again at its end: checked with
 * `out` pointing into the inputs themselves, where re-reading the written value would be
 * wrong. */
#include "adcheck.h"
double __enzyme_autodiff(void *, ...);
extern int enzyme_dup, enzyme_const;

__attribute__((noinline)) void loss(const double *x, int n, double *out) {
  double s = 0;
  for (int i = 0; i < n; i++) s += sin(x[i]) * x[(i + 1) % n];
  *out = s * s;
}
static double s_of(const double *x, int n) { double o; loss(x, n, &o); return o; }

int main(void) {
  enum { N = 6 };
  double x0[N] = {0.3, -0.2, 0.5, 0.1, 0.9, -0.7}, fd[N];
  ac_fd_grad(s_of, x0, N, fd);

  /* separate output: the usual case */
  double x[N], dx[N] = {0}, out = 0, dout = 1.0;
  for (int i = 0; i < N; i++) x[i] = x0[i];
  __enzyme_autodiff((void *)loss, enzyme_dup, x, dx, enzyme_const, N, enzyme_dup, &out, &dout);
  for (int i = 0; i < N; i++) ac_near("separate output", dx[i], fd[i], 1e-6);
  ac_near("output value", out, s_of(x0, N), 1e-12);

  /* the output overwrites x[2]: its adjoint seed sits in dx[2] and is consumed */
  double y[N], dy[N] = {0};
  for (int i = 0; i < N; i++) y[i] = x0[i];
  dy[2] = 1.0;
  __enzyme_autodiff((void *)loss, enzyme_dup, y, dy, enzyme_const, N, enzyme_dup, &y[2], &dy[2]);
  for (int i = 0; i < N; i++) ac_near("output aliasing an input", dy[i], fd[i], 1e-6);
  ac_near("aliased output value", y[2], s_of(x0, N), 1e-12);
  return ac_done();
}
