/* Loops whose iteration count is known when they start keep the values their reverse needs on
 * one tape record for all iterations (a static record), laid out by columns when the loop keeps
 * few values and by rows when it keeps many. Members: a ping-pong stencil (a loop that never
 * grows the tape: the record's columns are addressed from a base taken once), a loop counting
 * from a value (j = i + 1 ..), a loop keeping six values (rows), a loop calling a noinline
 * function that tapes its own values (the tape grows inside the loop), a long double kept
 * beside a double (a two-cell column), and a loop counting down. Reverse against central
 * differences, forward against reverse, and the split pieces against the combined gradient. */
#include "adcheck.h"
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);

/* two buffers swapped every step; each point keeps u[i] and its Laplacian */
__attribute__((noinline)) double stencil(const double *x, int n) {
  int m = 24;
  double *u = malloc(sizeof(double) * m), *next = malloc(sizeof(double) * m), e = 0;
  for (int i = 0; i < m; i++) u[i] = x[i % n] * (1 + 0.1 * i);
  next[0] = u[0];
  next[m - 1] = u[m - 1];
  for (int s = 0; s < 9; s++) {
    for (int i = 1; i < m - 1; i++)
      next[i] = u[i] + 0.2 * x[i % n] * (u[i - 1] - 2 * u[i] + u[i + 1]) + 0.1 * (u[i] - u[i] * u[i] * u[i]);
    double *t = u; u = next; next = t;
  }
  for (int i = 0; i < m; i++) e += u[i] * u[i] * (1 + 0.05 * i);
  free(u); free(next);
  return e;
}

/* a triangular pair loop: the inner loop counts from i + 1 */
__attribute__((noinline)) double pairs(const double *x, int n) {
  double e = 0, p[12];
  for (int i = 0; i < 12; i++) p[i] = x[i % n] + 0.3 * i;
  for (int i = 0; i < 12; i++)
    for (int j = i + 1; j < 12; j++) {
      double d = p[j] - p[i];
      e += sin(d) * cos(p[i] * 0.5) / (1 + d * d);
    }
  return e;
}

/* six values kept per iteration: laid out by rows */
__attribute__((noinline)) double many(const double *x, int n) {
  double *a = malloc(sizeof(double) * 40), e = 0;
  for (int i = 0; i < 40; i++) a[i] = x[i % n] * 0.5 + 0.01 * i;
  for (int r = 0; r < 4; r++)
    for (int i = 0; i < 40; i++) {
      double v = a[i], w = sin(v), q = v * w, z = exp(-v * v), c = cos(q), t = tanh(z + c);
      a[i] = w * z + c * t + q * 0.1;
    }
  for (int i = 0; i < 40; i++) e += a[i];
  free(a);
  return e;
}

__attribute__((noinline)) double kernel(double v, double w) { return sin(v * w) * exp(-v * v) + w; }

/* the callee tapes its own values on the caller's tape inside the loop */
__attribute__((noinline)) double calls(const double *x, int n) {
  double s = 0.1, e = 0;
  for (int i = 0; i < 30; i++) {
    double v = x[i % n] + 0.01 * i;
    s = kernel(v, s) * 0.7 + sin(s) * v;
    e += s * s;
  }
  return e;
}

/* a long double beside a double: a column of two-cell values */
__attribute__((noinline)) double wide(const double *x, int n) {
  long double acc = 0;
  double e = 0;
  for (int i = 0; i < 16; i++) {
    long double v = (long double)x[i % n] * (1 + 0.1L * i);
    double d = sin((double)v);
    acc += v * v * (long double)d;
    e += d * d;
  }
  return e + (double)acc;
}

/* a loop counting down */
__attribute__((noinline)) double down(const double *x, int n) {
  double e = 1;
  for (int i = 19; i >= 0; i--) e = e * cos(x[i % n] + 0.05 * i) + sin(e) * x[(i + 1) % n];
  return e;
}

#define CHECK(f, x, n)                                                                     \
  do {                                                                                     \
    double g[8] = {0}, fd[8], gs[8] = {0};                                                 \
    __enzyme_autodiff((void *)f, enzyme_dup, x, g, enzyme_const, n);                       \
    ac_fd_grad_n(f, x, n, n, fd);                                                          \
    for (int i = 0; i < n; i++) ac_near(#f " reverse", g[i], fd[i], 1e-6);                 \
    void *tape = __enzyme_augmentfwd((void *)f, enzyme_dup, x, gs, enzyme_const, n);       \
    __enzyme_reverse((void *)f, enzyme_dup, x, gs, enzyme_const, n, 1.0, tape);            \
    for (int i = 0; i < n; i++) ac_near(#f " split", gs[i], g[i], 1e-12);                  \
    for (int i = 0; i < n; i++) {                                                          \
      double e[8] = {0};                                                                   \
      e[i] = 1;                                                                            \
      ac_near(#f " forward", __enzyme_fwddiff((void *)f, enzyme_dup, x, e, enzyme_const, n), g[i], 1e-6); \
    }                                                                                      \
  } while (0)

int main(void) {
  double x[8];
  for (int i = 0; i < 8; i++) x[i] = 0.4 * sin(1.3 * i + 0.2) + 0.1;
  CHECK(stencil, x, 5);
  CHECK(pairs, x, 4);
  CHECK(many, x, 3);
  CHECK(calls, x, 4);
  CHECK(wide, x, 3);
  CHECK(down, x, 6);
  return ac_done();
}
