/* Adjoints of loop-invariant values, and quotients by them. A value every iteration of a loop
 * reads (a norm, a scale, a mean, a struct's field, an outer loop's element) gets one
 * contribution per iteration in the reverse sweep: its adjoint is a running sum over the loop,
 * which the engine may add up in any order, so the reverse loop vectorizes. A quotient of
 * re-readable data by such a value is recomputed in the reverse sweep, not kept per iteration.
 * Members: the Enzyme paper's normalization (mag() a call, hoisted; of the input and of a
 * local copy), an affine map with scalar
 * parameters, standardization ((x - mean) / sd), a struct's scale field, a reciprocal with a
 * loop-invariant numerator, an outer loop's element used by a whole inner loop, and
 * single-precision normalization. Each: reverse against central differences, split against
 * combined, split with the input overwritten between the pieces. */
#include "adcheck.h"
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);

#define N 8
#define LONG 64 /* the loops run over `LONG` elements built from the N inputs */

static double w(int i) { return 0.3 + 0.01 * ((i * 7) % 13); }

__attribute__((noinline)) static double mag(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += x[i] * x[i];
  return sqrt(s);
}

/* out_i = in_i / mag(in), objective sum w_i out_i: the input read directly (the quotient is
 * recomputed from it), and a local copy */
__attribute__((noinline)) double normalized(const double *x, int n) {
  double out[N], e = 0;
  for (int i = 0; i < n; i++) out[i] = x[i] / mag(x, n);
  for (int i = 0; i < n; i++) e += w(i) * out[i];
  return e;
}

__attribute__((noinline)) double normalized_copy(const double *x, int n) {
  double in[LONG], out[LONG], e = 0;
  for (int i = 0; i < LONG; i++) in[i] = x[i % n] + 0.01 * i;
  for (int i = 0; i < LONG; i++) out[i] = in[i] / mag(in, LONG);
  for (int i = 0; i < LONG; i++) e += w(i) * out[i];
  return e;
}

/* y_i = a z_i + b with scalar parameters a, b read in every iteration */
__attribute__((noinline)) double affine(const double *x, int n) {
  double a = x[0] * x[1], b = sin(x[2]), z[LONG], e = 0;
  for (int i = 0; i < LONG; i++) z[i] = x[i % n] - 0.02 * i;
  for (int i = 0; i < LONG; i++) {
    double y = a * z[i] + b;
    e += w(i) * y * y;
  }
  return e;
}

/* (z_i - mean) / sd, mean and sd computed before the loop */
__attribute__((noinline)) double standardized(const double *x, int n) {
  double z[LONG], mean = 0, var = 0, e = 0;
  for (int i = 0; i < LONG; i++) z[i] = x[i % n] * (1.0 + 0.02 * i);
  for (int i = 0; i < LONG; i++) mean += z[i];
  mean /= LONG;
  for (int i = 0; i < LONG; i++) var += (z[i] - mean) * (z[i] - mean);
  double sd = sqrt(var / LONG + 0.1);
  for (int i = 0; i < LONG; i++) {
    double s = (z[i] - mean) / sd;
    e += w(i) * s * s * s;
  }
  return e;
}

struct layer { double scale; double bias; const double *in; };

__attribute__((noinline)) static double apply(const struct layer *p, double *out) {
  double e = 0;
  for (int i = 0; i < LONG; i++) {
    out[i] = tanh(p->scale * p->in[i % N] + p->bias);
    e += w(i) * out[i];
  }
  return e;
}

/* a struct's scale and bias fields read in every iteration of a callee's loop */
__attribute__((noinline)) double scaled(const double *x, int n) {
  double out[LONG];
  struct layer l = {x[3] * 0.5, x[4] * x[4], x};
  return apply(&l, out) + out[n];
}

/* c / z_i with c invariant: the quotient and its square appear in the derivative */
__attribute__((noinline)) double reciprocal(const double *x, int n) {
  double c = exp(0.1 * x[5]), e = 0;
  for (int i = 0; i < n; i++) {
    double r = c / (2.0 + x[i] * x[i]);
    e += w(i) * r * r;
  }
  return e;
}

/* an outer loop's element scales a whole inner loop */
__attribute__((noinline)) double outer_scales(const double *x, int n) {
  double e = 0;
  for (int j = 0; j < n; j++) {
    double s = x[j] * x[j], acc = 0;
    for (int i = 0; i < LONG; i++) acc += s * x[(i + j) % n] / (1.0 + 0.01 * i);
    e += cos(acc);
  }
  return e;
}

__attribute__((noinline)) static float magf(const float *x, int n) {
  float s = 0;
  for (int i = 0; i < n; i++) s += x[i] * x[i];
  return sqrtf(s);
}

/* single precision: the float adjoint of magf sums over the loop as well */
__attribute__((noinline)) double normalized_float(const double *x, int n) {
  float in[LONG], out[LONG];
  double e = 0;
  for (int i = 0; i < LONG; i++) in[i] = (float)x[i % n] + 0.01f * i;
  for (int i = 0; i < LONG; i++) out[i] = in[i] / magf(in, LONG);
  for (int i = 0; i < LONG; i++) e += w(i) * out[i];
  return e;
}

static void check_float(void) {
  double x[N], g[N] = {0};
  for (int i = 0; i < N; i++) x[i] = 0.4 + 0.13 * i;
  __enzyme_autodiff((void *)normalized_float, enzyme_dup, x, g, enzyme_const, N);
  for (int i = 0; i < N; i++) {
    double s = x[i], h = 1e-3;
    x[i] = s + h; double fp = normalized_float(x, N);
    x[i] = s - h; double fm = normalized_float(x, N);
    x[i] = s;
    ac_near("normalized_float reverse", g[i], (fp - fm) / (2 * h), 2e-3);
  }
}

int main(void) {
  double x[N];
  for (int i = 0; i < N; i++) x[i] = 0.4 + 0.13 * i - 0.05 * (i % 3);
  AC_CHECK_SPLIT(normalized, x, N);
  AC_CHECK_SPLIT(normalized_copy, x, N);
  AC_CHECK_SPLIT(affine, x, N);
  AC_CHECK_SPLIT(standardized, x, N);
  AC_CHECK_SPLIT(scaled, x, N);
  AC_CHECK_SPLIT(reciprocal, x, N);
  AC_CHECK_SPLIT(outer_scales, x, N);
  check_float();
  return ac_done();
}
