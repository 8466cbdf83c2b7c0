/* Side records of static inner loops: a value every iteration of an outer (time) loop
 * computes alike, in an inner loop whose trip count is known when it starts, is kept once for
 * all the inner loop's iterations -- one record reserved on the side stack in the inner
 * loop's preheader, indexed by the IV -- instead of pushed and popped every iteration.
 * Members: a heat stepper (r * kappa[i] over the space loop, ping-pong buffers), two inner
 * loops per step, values computed in branches of the inner loop, an inner loop counting from
 * 2, a nest of two inner loops each keeping values (the outer one falls back to pushes), and
 * a value kept because it is a call (exp) rather than a load, and an outer loop keeping a
 * value of its own before the inner loop's record. Each: reverse against central
 * differences, split against combined, split with the input overwritten between the pieces. */
#include "adcheck.h"
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);

/* u_i += r k_i (u_{i-1} - 2 u_i + u_{i+1}): k = x read by every step alike */
__attribute__((noinline)) double heat(const double *x, int n) {
  int m = n + 3;
  double *u = malloc(sizeof(double) * m), *next = malloc(sizeof(double) * m), e = 0;
  for (int i = 0; i < m; i++) u[i] = 0.3 + 0.1 * i;
  next[0] = u[0];
  next[m - 1] = u[m - 1];
  for (int s = 0; s < n + 1; s++) {
    for (int i = 1; i < m - 1; i++)
      next[i] = u[i] + 0.2 * x[i % n] * (u[i - 1] - 2 * u[i] + u[i + 1]) + 0.05 * u[i] * u[i];
    double *t = u; u = next; next = t;
  }
  for (int i = 0; i < m; i++) e += u[i] * u[i];
  free(u); free(next);
  return e;
}

/* two inner loops per step, each keeping its own invariant */
__attribute__((noinline)) double two_inner(const double *x, int n) {
  double *a = malloc(sizeof(double) * n), e = 0;
  for (int i = 0; i < n; i++) a[i] = 0.5;
  for (int s = 0; s < n; s++) {
    for (int i = 0; i < n; i++) a[i] = a[i] * 0.9 + sin(x[i]) * a[(i + 1) % n];
    for (int i = 0; i < n; i++) a[i] += 0.1 * x[(i + 2) % n] * x[i] * a[i];
  }
  for (int i = 0; i < n; i++) e += a[i];
  free(a);
  return e;
}

/* the kept values are computed in branches of the inner loop */
__attribute__((noinline)) double branchy(const double *x, int n) {
  double *a = malloc(sizeof(double) * n), e = 0;
  for (int i = 0; i < n; i++) a[i] = 1.0 + 0.1 * i;
  for (int s = 0; s < n - 1; s++)
    for (int i = 0; i < n; i++) {
      double w;
      if (i % 2) w = exp(-x[i] * x[i]);
      else w = log(1.0 + x[i] * x[i]);
      a[i] = a[i] * w + 0.1 * a[(i + 1) % n];
    }
  for (int i = 0; i < n; i++) e += a[i] * a[i];
  free(a);
  return e;
}

/* an inner loop counting from 2 */
__attribute__((noinline)) double from_two(const double *x, int n) {
  double *a = malloc(sizeof(double) * (n + 2)), e = 0;
  for (int i = 0; i < n + 2; i++) a[i] = 0.2 * i;
  for (int s = 0; s < n + 1; s++)
    for (int i = 2; i < n + 2; i++) a[i] = a[i - 1] * 0.3 + cos(x[i - 2]) * a[i] + a[i - 2] * 0.1;
  for (int i = 0; i < n + 2; i++) e += a[i] * (1 + 0.1 * i);
  free(a);
  return e;
}

/* two nested inner loops that both keep values: the outer one's are pushed per iteration */
__attribute__((noinline)) double nested(const double *x, int n) {
  double *a = malloc(sizeof(double) * n * n), e = 0;
  for (int i = 0; i < n * n; i++) a[i] = 0.1 * (i % 7);
  for (int s = 0; s < n; s++)
    for (int j = 0; j < n; j++) {
      double c = tanh(x[j]);
      for (int i = 0; i < n; i++) a[j * n + i] = a[j * n + i] * c + sin(x[i]) * 0.2;
    }
  for (int i = 0; i < n * n; i++) e += a[i] * a[i];
  free(a);
  return e;
}

/* kept because it is a call: exp of an input, the same every step */
__attribute__((noinline)) double calls(const double *x, int n) {
  double s = 0.5, e = 0;
  for (int t = 0; t < n + 1; t++) {
    for (int i = 0; i < n; i++) s = s * 0.7 + exp(0.3 * x[i]) * sin(s);
    e += s;
  }
  return e;
}

/* the outer loop keeps a value of its own before the inner loop's record */
__attribute__((noinline)) double outer_value(const double *x, int n) {
  double *a = malloc(sizeof(double) * n), e = 0;
  for (int i = 0; i < n; i++) a[i] = 0.4 + 0.1 * i;
  for (int s = 0; s < n + 1; s++) {
    double c = exp(0.2 * x[0] * x[1]);
    for (int i = 0; i < n; i++) a[i] = a[i] * c * 0.5 + sin(x[i]) * a[(i + 1) % n];
  }
  for (int i = 0; i < n; i++) e += a[i];
  free(a);
  return e;
}

int main(void) {
  double x[8];
  for (int i = 0; i < 8; i++) x[i] = 0.4 * sin(1.3 * i + 0.2) + 0.1;
  AC_CHECK_SPLIT(heat, x, 5);
  AC_CHECK_SPLIT(two_inner, x, 4);
  AC_CHECK_SPLIT(branchy, x, 6);
  AC_CHECK_SPLIT(from_two, x, 4);
  AC_CHECK_SPLIT(nested, x, 3);
  AC_CHECK_SPLIT(calls, x, 5);
  AC_CHECK_SPLIT(outer_value, x, 4);
  return ac_done();
}
