/* Control flow: if/else chains, early returns, loops of every shape O2 emits, recursion. */
#include "adcheck.h"
extern int enzyme_dup, enzyme_const, enzyme_out;
double __enzyme_autodiff(void *, ...);

__attribute__((noinline)) double branches(double x) {
  double r = x;
  if (x > 1.0) r = r * x;
  else if (x > 0.5) r = sin(r);
  else r = exp(r) * 2.0;
  if (r > 0.9) return r * r;    /* early return */
  return r + x;
}

/* rotated loop with a data-dependent trip count */
__attribute__((noinline)) double poly(double x, int n) {
  double s = 0, p = 1;
  for (int i = 0; i < n; i++) { s += p / (i + 1); p *= x; }
  return s;
}

/* loop with two exits: stop early when the running product gets large */
__attribute__((noinline)) double two_exits(double x, int n) {
  double p = 1.0;
  for (int i = 0; i < n; i++) {
    p = p * x + 0.1;
    if (p > 50.0) return p * 2.0;
  }
  return p;
}

/* while loop whose trip count depends on the value: Newton iterations for sqrt */
__attribute__((noinline)) double newton_sqrt(double a) {
  double y = a > 1 ? a : 1.0;
  int it = 0;
  while (fabs(y * y - a) > 1e-13 * a && it < 100) { y = 0.5 * (y + a / y); it++; }
  return y;
}

/* nested loops over a matrix held in active memory */
__attribute__((noinline)) double nested(const double *m, int rows, int cols) {
  double total = 0;
  for (int i = 0; i < rows; i++) {
    double row = 0;
    for (int j = 0; j <= i && j < cols; j++) row += m[i * cols + j] * m[j];
    total += row * row;
  }
  return total;
}

/* do-while with a break in the middle */
__attribute__((noinline)) double do_while(double x) {
  double acc = x;
  int k = 0;
  do {
    acc = acc * 0.9 + sin(acc);
    if (acc > 3.0) break;
    k++;
  } while (k < 7);
  return acc;
}

__attribute__((noinline)) double rec(double x, int n) { return n == 0 ? x : sin(rec(x, n - 1)) * x; }
__attribute__((noinline)) double fib_like(double x, int n) {
  if (n < 2) return x;
  return fib_like(x, n - 1) * 0.5 + fib_like(x * x, n - 2);
}

static int N_ = 0;
static double poly_n(double x) { return poly(x, N_); }
static double two_exits_n(double x) { return two_exits(x, N_); }
static double rec_n(double x) { return rec(x, N_); }
static double fib_n(double x) { return fib_like(x, N_); }
static double nested_f(const double *m, int n) { (void)n; return nested(m, 4, 4); }

int main(void) {
  double xs[] = {0.3, 0.7, 1.4, 2.2};
  for (int i = 0; i < 4; i++) {
    double x = xs[i];
    ac_near("branches", __enzyme_autodiff((void *)branches, x), AC_FD(branches, x), 1e-6);
    ac_near("newton_sqrt", __enzyme_autodiff((void *)newton_sqrt, x), 0.5 / sqrt(x), 1e-6);
    ac_near("do_while", __enzyme_autodiff((void *)do_while, x), AC_FD(do_while, x), 1e-6);
    for (int n = 0; n < 6; n += 2) {
      N_ = n;
      ac_near("poly", __enzyme_autodiff((void *)poly, x, n), AC_FD(poly_n, x), 1e-6);
      ac_near("two_exits", __enzyme_autodiff((void *)two_exits, x, n + 3), (N_ = n + 3, AC_FD(two_exits_n, x)), 1e-6);
      N_ = n;
      ac_near("rec", __enzyme_autodiff((void *)rec, x, n), AC_FD(rec_n, x), 1e-6);
      ac_near("fib_like", __enzyme_autodiff((void *)fib_like, x, n), AC_FD(fib_n, x), 1e-6);
    }
  }
  double m[16], dm[16] = {0}, fd[16];
  for (int i = 0; i < 16; i++) m[i] = cos(i * 0.7);
  __enzyme_autodiff((void *)nested, enzyme_dup, m, dm, enzyme_const, 4, enzyme_const, 4);
  ac_fd_grad(nested_f, m, 16, fd);
  for (int i = 0; i < 16; i++) ac_near("nested", dm[i], fd[i], 1e-6);
  return ac_done();
}
