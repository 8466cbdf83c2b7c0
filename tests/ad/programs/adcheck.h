/* Self-checking helpers for the AD test programs: compare derivatives with central
 * finite differences or closed forms; print "ok N" and exit 0 when all hold. */
#ifndef ADCHECK_H
#define ADCHECK_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int ac_failures = 0, ac_checks = 0;

static void ac_near(const char *what, double got, double want, double rtol) {
  double scale = fabs(want) > 1.0 ? fabs(want) : 1.0;
  ac_checks++;
  if (!(fabs(got - want) <= rtol * scale)) {
    ac_failures++;
    fprintf(stderr, "MISMATCH %s: got %.12g want %.12g\n", what, got, want);
  }
}

static int ac_done(void) {
  if (ac_checks == 0) { fprintf(stderr, "no checks ran\n"); return 2; }
  if (ac_failures) { printf("FAIL %d/%d\n", ac_failures, ac_checks); return 1; }
  printf("ok %d\n", ac_checks);
  return 0;
}

static double ac_h(double x) { return 1e-6 * (fabs(x) > 1.0 ? fabs(x) : 1.0); }

/* d f(x) / dx by central differences, for f: double -> double */
#define AC_FD(f, x) (((f)((x) + ac_h(x)) - (f)((x) - ac_h(x))) / (2 * ac_h(x)))
/* the same for float functions, with a step suited to single precision */
#define AC_FDF(f, x) (((double)(f)((float)(x) + 1e-2f) - (double)(f)((float)(x) - 1e-2f)) / (2e-2))

/* d f(x, n) / dx[i] for i < len by central differences */
static void ac_fd_grad_n(double (*f)(const double *, int), double *x, int len, int n, double *g) {
  for (int i = 0; i < len; i++) {
    double s = x[i], h = ac_h(s);
    x[i] = s + h; double fp = f(x, n);
    x[i] = s - h; double fm = f(x, n);
    x[i] = s;
    g[i] = (fp - fm) / (2 * h);
  }
}

/* gradient of a scalar function of an array by central differences */
static void ac_fd_grad(double (*f)(const double *, int), double *x, int n, double *g) {
  ac_fd_grad_n(f, x, n, n, g);
}

/* For `double f(const double *x, int n)`: the gradient of one __enzyme_autodiff call against
 * central differences, the split pieces (__enzyme_augmentfwd, __enzyme_reverse) against it,
 * and the split pieces again with the caller overwriting x between the two calls (n <= 8). */
#define AC_CHECK_SPLIT(f, x, n)                                                            \
  do {                                                                                     \
    double g[8] = {0}, fd[8], gs[8] = {0}, go[8] = {0}, keep[8];                           \
    __enzyme_autodiff((void *)f, enzyme_dup, x, g, enzyme_const, n);                       \
    ac_fd_grad_n(f, x, n, n, fd);                                                          \
    for (int i = 0; i < n; i++) ac_near(#f " reverse", g[i], fd[i], 1e-6);                 \
    void *tape = __enzyme_augmentfwd((void *)f, enzyme_dup, x, gs, enzyme_const, n);       \
    __enzyme_reverse((void *)f, enzyme_dup, x, gs, enzyme_const, n, 1.0, tape);            \
    for (int i = 0; i < n; i++) ac_near(#f " split", gs[i], g[i], 1e-12);                  \
    memcpy(keep, x, sizeof keep);                                                          \
    tape = __enzyme_augmentfwd((void *)f, enzyme_dup, x, go, enzyme_const, n);             \
    for (int i = 0; i < n; i++) x[i] = -7.0 - i; /* the caller reuses its input */         \
    __enzyme_reverse((void *)f, enzyme_dup, x, go, enzyme_const, n, 1.0, tape);            \
    memcpy(x, keep, sizeof keep);                                                          \
    for (int i = 0; i < n; i++) ac_near(#f " split, input overwritten", go[i], g[i], 1e-12); \
  } while (0)
#endif
