/* Scratch arrays on the stack. In combined mode the reverse sweep runs in the function's own
 * frame, so a local array filled before a loop and only read afterwards is read again there
 * (its lifetime.end waits for the end of the reverse sweep) instead of taped at every read;
 * an array written again later, declared inside a loop, or a VLA whose stack is restored is
 * still taped. Members: a fixed-size array filled then read by a nonlinear loop, a VLA, an
 * array refilled in a second phase, an array declared in a loop body, an array a callee
 * reads, an array updated in place step after step, a struct with an array field, and a
 * two-dimensional array read by a loop nest. Each: reverse against central differences, split
 * against combined, split with the input overwritten between the pieces. */
#include "adcheck.h"
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);

#define N 8
#define M 32

__attribute__((noinline)) double filled_then_read(const double *x, int n) {
  double z[M], e = 0;
  for (int i = 0; i < M; i++) z[i] = x[i % n] * (1.0 + 0.05 * i);
  for (int i = 0; i < M; i++) e += sin(z[i]) * z[i] + z[i] / (1.0 + z[(i + 3) % M] * z[(i + 3) % M]);
  return e;
}

__attribute__((noinline)) double vla(const double *x, int n) {
  double z[2 * n], e = 0;
  for (int i = 0; i < 2 * n; i++) z[i] = exp(0.3 * x[i % n]) - 0.1 * i;
  for (int i = 0; i < 2 * n; i++) e += z[i] * z[(i + 1) % (2 * n)] / (2.0 + z[i] * z[i]);
  return e;
}

/* z is read, then refilled and read again: the first phase's reads must not see the second */
__attribute__((noinline)) double refilled(const double *x, int n) {
  double z[M], e = 0;
  for (int i = 0; i < M; i++) z[i] = x[i % n] + 0.01 * i;
  for (int i = 0; i < M; i++) e += z[i] * z[i] * z[i];
  for (int i = 0; i < M; i++) z[i] = cos(x[(i + 1) % n]) * z[i];
  for (int i = 0; i < M; i++) e += z[i] * sin(z[i]);
  return e;
}

/* t lives for one iteration of the outer loop: each iteration fills it anew */
__attribute__((noinline)) double per_iteration(const double *x, int n) {
  double e = 0;
  for (int j = 0; j < n; j++) {
    volatile int k = 4;   /* keeps t an array (not split into scalars) at every level */
    double t[4];
    for (int i = 0; i < k; i++) t[i] = x[(i + j) % n] * (j + 1);
    for (int i = 0; i < k; i++) e += t[i] * t[(i + 1) % 4] * sin(t[i]);
  }
  return e;
}

__attribute__((noinline)) static double weighted(const double *z, int m) {
  double s = 0;
  for (int i = 0; i < m; i++) s += (0.5 + 0.01 * i) * z[i] * z[i];
  return sqrt(s);
}

/* a callee reads the array (it does not keep its address) */
__attribute__((noinline)) double callee_reads(const double *x, int n) {
  double z[M], e = 0;
  for (int i = 0; i < M; i++) z[i] = x[i % n] - 0.02 * i;
  for (int i = 0; i < M; i++) e += z[i] * weighted(z, M) * z[(i + 5) % M];
  return e;
}

/* updated in place every step: each step's reads come before the next step's writes */
__attribute__((noinline)) double stepped(const double *x, int n) {
  double u[M], e = 0;
  for (int i = 0; i < M; i++) u[i] = x[i % n];
  for (int s = 0; s < 4; s++)
    for (int i = 1; i < M - 1; i++) u[i] = u[i] + 0.1 * u[i] * (u[i - 1] - u[i + 1]);
  for (int i = 0; i < M; i++) e += u[i] * u[i];
  return e;
}

struct frame { double scale; double v[M]; };

__attribute__((noinline)) double in_struct(const double *x, int n) {
  struct frame f;
  double e = 0;
  f.scale = x[0] * x[1];
  for (int i = 0; i < M; i++) f.v[i] = x[i % n] + f.scale * 0.01 * i;
  for (int i = 0; i < M; i++) e += f.v[i] * f.v[i] * f.scale / (1.0 + f.v[i] * f.v[i]);
  return e;
}

__attribute__((noinline)) double matrix(const double *x, int n) {
  double a[N][N], e = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) a[i][j] = x[i] * x[j] + 0.1 * (i - j);
  for (int i = 0; i < n; i++) {
    double r = 0;
    for (int j = 0; j < n; j++) r += a[i][j] * a[j][i] * x[j];
    e += tanh(r);
  }
  return e;
}

int main(void) {
  double x[N];
  for (int i = 0; i < N; i++) x[i] = 0.3 + 0.11 * i - 0.07 * (i % 3);
  AC_CHECK_SPLIT(filled_then_read, x, N);
  AC_CHECK_SPLIT(vla, x, N);
  AC_CHECK_SPLIT(refilled, x, N);
  AC_CHECK_SPLIT(per_iteration, x, N);
  AC_CHECK_SPLIT(callee_reads, x, N);
  AC_CHECK_SPLIT(stepped, x, N);
  AC_CHECK_SPLIT(in_struct, x, N);
  AC_CHECK_SPLIT(matrix, x, N);
  return ac_done();
}
