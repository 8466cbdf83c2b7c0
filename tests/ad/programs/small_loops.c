/* Loops with a small constant trip count (the components of a 3-vector, a 3x3 rotation, a
 * fixed 5-tap stencil, a degree-6 polynomial) inside loops with a run-time count, in the
 * array-of-structs and array styles: the pre-AD pipeline unrolls them completely. A
 * 1000-iteration constant loop stays a loop. Gradients against central differences. */
#include "adcheck.h"
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);

struct body { double x[3], a[3], m; };

/* pairwise forces, each pair once, written into the struct array (n-body, AoS) */
__attribute__((noinline)) double pairs(const double *p, int n) {
  struct body *b = malloc(sizeof(struct body) * n);
  for (int i = 0; i < n; i++) {
    for (int c = 0; c < 3; c++) { b[i].x[c] = p[3 * i + c]; b[i].a[c] = 0; }
    b[i].m = 1.0 + 0.1 * i;
  }
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++) {
      double d[3], r2 = 0.01;
      for (int c = 0; c < 3; c++) { d[c] = b[j].x[c] - b[i].x[c]; r2 += d[c] * d[c]; }
      double inv3 = 1 / (r2 * sqrt(r2));
      for (int c = 0; c < 3; c++) { b[i].a[c] += b[j].m * inv3 * d[c]; b[j].a[c] -= b[i].m * inv3 * d[c]; }
    }
  double e = 0;
  for (int i = 0; i < n; i++)
    for (int c = 0; c < 3; c++) e += b[i].a[c] * b[i].a[c] * (1 + 0.2 * c);
  free(b);
  return e;
}

/* each point rotated by R(theta) (built from the first parameter), 3x3 times 3 */
__attribute__((noinline)) double rotate(const double *q, int n) {
  double c = cos(q[0]), s = sin(q[0]);
  double R[3][3] = {{c, -s, 0}, {s, c, 0}, {0, 0, 1}};
  double *out = malloc(sizeof(double) * 3 * n), e = 0;
  for (int i = 0; i < n; i++)
    for (int r = 0; r < 3; r++) {
      double acc = 0;
      for (int k = 0; k < 3; k++) acc += R[r][k] * q[1 + 3 * i + k];
      out[3 * i + r] = acc;
    }
  for (int i = 0; i < 3 * n; i++) e += out[i] * out[i] * out[i];
  free(out);
  return e;
}

/* a 5-tap stencil with fixed weights, then a nonlinearity, twice (state overwritten) */
static const double W[5] = {0.1, 0.2, 0.4, 0.2, 0.1};
__attribute__((noinline)) double taps(const double *u0, int n) {
  double *u = malloc(sizeof(double) * n), *v = malloc(sizeof(double) * n), e = 0;
  for (int i = 0; i < n; i++) u[i] = u0[i];
  for (int step = 0; step < 2; step++) {
    for (int i = 2; i < n - 2; i++) {
      double acc = 0;
      for (int k = 0; k < 5; k++) acc += W[k] * u[i + k - 2];
      v[i] = tanh(acc);
    }
    for (int i = 2; i < n - 2; i++) u[i] = v[i];
  }
  for (int i = 0; i < n; i++) e += u[i] * u[i];
  free(u); free(v);
  return e;
}

/* a degree-6 polynomial (coefficients are the first 7 parameters) at run-time many points */
__attribute__((noinline)) double poly6(const double *c, int n) {
  double e = 0;
  for (int i = 0; i < n; i++) {
    double x = c[7 + i], y = 0;
    for (int k = 6; k >= 0; k--) y = y * x + c[k];
    e += y * y;
  }
  return e;
}

/* a constant trip count far beyond any unrolling: stays a loop */
__attribute__((noinline)) double sum1000(const double *x, int n) {
  double e = 0;
  for (int i = 0; i < 1000; i++) e += sin(x[i % n] * (1 + 0.001 * i));
  return e;
}

/* gradient (combined, then split) of f w.r.t. x[0..len) against central differences */
#define CHECK(what, f, x, len, n)                                                        \
  do {                                                                                   \
    double g[64] = {0}, fd[64], gs[64] = {0};                                            \
    __enzyme_autodiff((void *)f, enzyme_dup, x, g, enzyme_const, n);                     \
    ac_fd_grad_n(f, x, len, n, fd);                                                      \
    for (int i = 0; i < len; i++) ac_near(what, g[i], fd[i], 1e-6);                      \
    void *tape = __enzyme_augmentfwd((void *)f, enzyme_dup, x, gs, enzyme_const, n);     \
    __enzyme_reverse((void *)f, enzyme_dup, x, gs, enzyme_const, n, 1.0, tape);          \
    for (int i = 0; i < len; i++) ac_near(what, gs[i], g[i], 1e-12);                    \
  } while (0)

int main(void) {
  double x[64];
  for (int i = 0; i < 64; i++) x[i] = 0.3 * sin(1.7 * i + 0.4) + 0.05 * i;
  CHECK("pairs", pairs, x, 15, 5);
  CHECK("rotate", rotate, x, 13, 4);
  CHECK("taps", taps, x, 12, 12);
  CHECK("poly6", poly6, x, 12, 5);
  CHECK("sum1000", sum1000, x, 9, 9);
  return ac_done();
}
