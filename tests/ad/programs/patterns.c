/* Everyday C patterns: pointer walking, aliasing arguments, globals read as constants,
 * mutual recursion, switch in a loop, memset, 2-D arrays, float buffers, output structs. */
#include "adcheck.h"
extern int enzyme_dup, enzyme_const, enzyme_out;
double __enzyme_autodiff(void *, ...);
float __enzyme_autodifff(void *, ...);

static double gscale = 1.75;   /* a mutable global that is only read */

__attribute__((noinline)) double walk(const double *x, const double *end) {
  double s = 0;
  for (const double *p = x; p < end; p++) s += *p * *p * gscale;
  return s;
}
__attribute__((noinline)) double alias(const double *a, const double *b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[n - 1 - i];
  return s;
}
__attribute__((noinline)) double odd(double x, int n);
__attribute__((noinline)) double even(double x, int n) { return n == 0 ? x : cos(odd(x, n - 1)) + x; }
__attribute__((noinline)) double odd(double x, int n) { return n == 0 ? x * x : sin(even(x, n - 1)) * x; }
__attribute__((noinline)) double ops(const double *x, const int *code, int n) {
  double acc = 1.0;
  for (int i = 0; i < n; i++) {
    switch (code[i]) {
      case 0: acc += x[i]; break;
      case 1: acc *= x[i]; break;
      case 2: acc = acc / (1.0 + x[i] * x[i]); break;
      default: acc = exp(acc * 0.1) - x[i];
    }
  }
  return acc;
}
__attribute__((noinline)) void reset_then_fill(double *out, const double *x, int n) {
  memset(out, 0, n * sizeof(double));
  for (int i = 0; i < n; i++) out[i / 2] += x[i] * x[i];
}
__attribute__((noinline)) double mat(double m[3][3]) {
  double t = 0;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) t += m[i][j] * m[j][i] * (i + 2 * j + 1);
  return t;
}
__attribute__((noinline)) float fsum(const float *x, int n) {
  float s = 0;
  for (int i = 0; i < n; i++) s += sqrtf(x[i]) * x[i];
  return s;
}
struct stats { int count; double mean; double var; };
__attribute__((noinline)) void moments(const double *x, int n, struct stats *st) {
  double m = 0, v = 0;
  for (int i = 0; i < n; i++) m += x[i];
  m /= n;
  for (int i = 0; i < n; i++) v += (x[i] - m) * (x[i] - m);
  st->count = n;
  st->mean = m;
  st->var = v / n;
}

enum { N = 6 };
static double walk_f(const double *x, int n) { return walk(x, x + n); }
static double alias_f(const double *x, int n) { return alias(x, x, n); }
static int CODE[N] = {0, 1, 2, 3, 1, 2};
static double ops_f(const double *x, int n) { return ops(x, CODE, n); }
static double rf_f(const double *x, int n) { double o[N]; reset_then_fill(o, x, n); return o[0] + 2 * o[1] + 3 * o[2]; }
static double mat_f(const double *x, int n) { double m[3][3]; memcpy(m, x, sizeof m); (void)n; return mat(m); }
static double even_f(double x) { return even(x, 5); }
static double mom_f(const double *x, int n) { struct stats s; moments(x, n, &s); return 2 * s.mean + 3 * s.var + s.count; }

int main(void) {
  double x[9], dx[9], fd[9];
  for (int i = 0; i < 9; i++) x[i] = 0.3 + 0.21 * i;
#define GRAD(label, call, fdf, n)                                          \
  do {                                                                    \
    memset(dx, 0, sizeof dx);                                             \
    call;                                                                 \
    ac_fd_grad(fdf, x, n, fd);                                            \
    for (int i = 0; i < n; i++) ac_near(label, dx[i], fd[i], 1e-6);       \
  } while (0)
  GRAD("walk", __enzyme_autodiff((void *)walk, x, dx, enzyme_const, x + N), walk_f, N);
  GRAD("alias", __enzyme_autodiff((void *)alias, x, dx, x, dx, N), alias_f, N);
  GRAD("switch in loop", __enzyme_autodiff((void *)ops, x, dx, enzyme_const, CODE, N), ops_f, N);
  double o[N], dout[N] = {1, 2, 3, 0, 0, 0};
  GRAD("memset", __enzyme_autodiff((void *)reset_then_fill, o, dout, x, dx, N), rf_f, N);
  GRAD("2-D", __enzyme_autodiff((void *)mat, x, dx), mat_f, 9);
  struct stats st, dst = {0, 2.0, 3.0};
  GRAD("output struct", __enzyme_autodiff((void *)moments, enzyme_dup, x, dx, enzyme_const, N, enzyme_dup, &st, &dst), mom_f, N);
  ac_near("mutual recursion", __enzyme_autodiff((void *)even, 0.4, 5), AC_FD(even_f, 0.4), 1e-6);
  float fx[4] = {0.5f, 1.0f, 1.5f, 2.0f}, dfx[4] = {0};
  __enzyme_autodifff((void *)fsum, fx, dfx, 4);
  for (int i = 0; i < 4; i++) ac_near("float buffer", dfx[i], 1.5 * sqrt(fx[i]), 1e-5);
  return ac_done();
}
