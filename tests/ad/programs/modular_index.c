/* Indices computed by integer division and remainder: the reverse sweep recomputes them
 * (the same operands the forward sweep divided, so no new trap) instead of keeping a tape
 * cell per iteration. Members: a periodic stencil ((i + 1) % n), a flat index split into row
 * and column (k / m, k % m), weights from a remainder of the IV, a circular buffer advanced
 * step after step, signed division of negative offsets, and an unsigned remainder of a
 * 64-bit hash. Each: reverse against central differences, split against combined, split with
 * the input overwritten between the pieces. */
#include <stdint.h>
#include "adcheck.h"
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);

#define N 8

__attribute__((noinline)) double periodic(const double *x, int n) {
  double e = 0;
  for (int i = 0; i < n; i++) {
    double d = x[(i + 1) % n] - 2 * x[i] + x[(i + n - 1) % n];
    e += d * d * x[i];
  }
  return e;
}

/* a 2 x 4 matrix walked by one flat index */
__attribute__((noinline)) double flat(const double *x, int n) {
  int m = n / 2;
  double e = 0;
  for (int k = 0; k < 2 * m; k++) {
    int r = k / m, c = k % m;
    e += sin(x[r * m + c]) * x[c] * (r + 1);
  }
  return e;
}

__attribute__((noinline)) double weights(const double *x, int n) {
  double e = 0;
  for (int i = 0; i < 4 * n; i++) {
    double w = 0.3 + 0.01 * ((i * 7) % 13);
    e += w * x[i % n] * x[(i / 3) % n];
  }
  return e;
}

__attribute__((noinline)) double circular(const double *x, int n) {
  double buf[5] = {0.1, 0.2, 0.3, 0.4, 0.5}, e = 0;
  int head = 0;
  for (int s = 0; s < 3 * n; s++) {
    buf[head] = 0.5 * buf[(head + 4) % 5] + x[s % n] * buf[(head + 2) % 5];
    e += buf[head] * buf[head];
    head = (head + 1) % 5;
  }
  return e;
}

/* signed division rounds toward zero: (j - 4) / 3 for j < 4 is 0 or -1 */
__attribute__((noinline)) double signed_offsets(const double *x, int n) {
  double e = 0;
  for (int j = 0; j < 3 * n; j++) {
    int o = (j - 4) / 3, q = (j - 7) % 4;
    e += x[(o + n) % n] * cos(x[(q + n) % n]) * (1 + q);
  }
  return e;
}

__attribute__((noinline)) double hashed(const double *x, int n) {
  double e = 0;
  uint64_t h = 1469598103934665603ull;
  for (int i = 0; i < 3 * n; i++) {
    h = (h ^ (uint64_t)i) * 1099511628211ull;
    e += x[h % (uint64_t)n] * x[i % n] / (1.0 + (double)(h % 7));
  }
  return e;
}

int main(void) {
  double x[N];
  for (int i = 0; i < N; i++) x[i] = 0.35 + 0.12 * i - 0.06 * (i % 3);
  AC_CHECK_SPLIT(periodic, x, N);
  AC_CHECK_SPLIT(flat, x, N);
  AC_CHECK_SPLIT(weights, x, N);
  AC_CHECK_SPLIT(circular, x, N);
  AC_CHECK_SPLIT(signed_offsets, x, N);
  AC_CHECK_SPLIT(hashed, x, N);
  return ac_done();
}
