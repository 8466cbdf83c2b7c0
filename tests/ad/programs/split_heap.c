/* Split pieces and the function's own heap blocks: a block malloc'd by the function, never
 * captured, that nothing writes once a loop has read it, is read again by the reverse piece
 * (its free moves to the end of the reverse piece) instead of being taped at every read.
 * Members: a table filled once and read in a loop nest (GMM's Q matrices); a helper with a
 * fresh scratch block per call, called in a loop by a parent (every call's block lives until
 * its own reverse call); a block written again after a loop reads it (the reads before
 * stay taped, the reads after are final); a block freed in one branch or the other (one free
 * after optimization, two before); and the blocks that must stay taped -- one per step,
 * freed in the loop, one escaping as an integer, one read outside loops; and a realloc'd block
 * (the first block's reads taped, the grown block's final reads not). Each: reverse against central differences, the split pieces against the
 * combined gradient, and once more with the input overwritten between the two pieces. */
#include "adcheck.h"
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);

/* a lower-triangular table filled once, read for every "point" */
__attribute__((noinline)) double qtable(const double *x, int n) {
  int d = n - 1;
  double *q = malloc(sizeof(double) * d * d), e = 0;
  for (int r = 0; r < d; r++)
    for (int c = 0; c < d; c++) q[r * d + c] = c > r ? 0 : (c == r ? exp(x[r % n]) : x[(r + c) % n] * 0.5);
  for (int p = 0; p < 7; p++) {
    double sq = 0;
    for (int r = 0; r < d; r++) {
      double z = 0;
      for (int c = 0; c <= r; c++) z += q[r * d + c] * (x[c % n] - 0.1 * p);
      sq += z * z;
    }
    e += log(1 + sq);
  }
  free(q);
  return e;
}

/* a fresh scratch block per call ... */
__attribute__((noinline)) double scratch(const double *x, int n, int k) {
  double *w = malloc(sizeof(double) * n), s = 0;
  for (int i = 0; i < n; i++) w[i] = sin(x[(i + k) % n] * (1 + 0.1 * k));
  for (int r = 0; r < 3; r++)
    for (int i = 0; i < n; i++) s += w[i] * w[(i + r) % n] * x[i];
  free(w);
  return s;
}

/* ... called once per step by a parent */
__attribute__((noinline)) double scratch_parent(const double *x, int n) {
  double e = 0;
  for (int k = 0; k < 5; k++) e += scratch(x, n, k) * (1 + 0.2 * e);
  return e;
}

/* written again after the loop that reads it: the reverse cannot read it back */
__attribute__((noinline)) double rewritten(const double *x, int n) {
  double *b = malloc(sizeof(double) * 2 * n), e = 0;
  for (int i = 0; i < 2 * n; i++) b[i] = x[i % n] * (i + 1);
  for (int i = 0; i < 2 * n; i++) e += b[i] * b[(i + 3) % (2 * n)];
  for (int i = 0; i < 2 * n; i++) b[i] = cos(e * 0.01 * i);
  for (int i = 0; i < 2 * n; i++) e += b[i] * x[i % n];
  free(b);
  return e;
}

/* freed in one branch or the other: neither free dominates the return */
__attribute__((noinline)) double branch_free(const double *x, int n) {
  double *b = malloc(sizeof(double) * 2 * n), e = 0;
  for (int i = 0; i < 2 * n; i++) b[i] = x[i % n] + 0.3 * i;
  for (int i = 0; i < 2 * n; i++) e += sin(b[i]) * b[(i + 1) % (2 * n)];
  if (e > 0) { e *= 1.5; free(b); } else { e -= 1; free(b); }
  return e;
}

/* a block per step, freed in the loop that allocates it */
__attribute__((noinline)) double per_step(const double *x, int n) {
  double e = 0;
  for (int s = 0; s < n - 1; s++) {
    double *b = malloc(sizeof(double) * n);
    for (int i = 0; i < n; i++) b[i] = x[i] * (1 + 0.1 * s) + e * 0.01;
    for (int i = 0; i < n; i++) e += b[i] * b[(i + 1) % n];
    free(b);
  }
  return e;
}

/* the block's address escapes (as an integer, into a global) */
unsigned long stamp;
__attribute__((noinline)) double captured(const double *x, int n) {
  double *b = malloc(sizeof(double) * n), e = 0;
  stamp ^= (unsigned long)b;
  for (int i = 0; i < n; i++) b[i] = x[i] * x[(i + 1) % n];
  for (int i = 0; i < n; i++) e += exp(-b[i]) * b[(i + 2) % n];
  free(b);
  return e;
}

/* grown by realloc: the first block's reads stay taped (realloc frees it), the grown block
 * is final after its last write */
__attribute__((noinline)) double grown(const double *x, int n) {
  double *b = malloc(sizeof(double) * n), e = 0;
  for (int i = 0; i < n; i++) b[i] = x[i];
  for (int i = 0; i < n; i++) e += sin(b[i]) * b[(i + 1) % n];
  b = realloc(b, sizeof(double) * 2 * n);
  for (int i = n; i < 2 * n; i++) b[i] = b[i - n] * b[i - n + 1];
  for (int i = 0; i < 2 * n; i++) e += b[i] * b[i] * (1 + 0.1 * i);
  free(b);
  return e;
}

/* read outside any loop: taped once (cheaper than keeping the block) */
__attribute__((noinline)) double straight(const double *x, int n) {
  double *b = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) b[i] = sin(x[i]) * (1 + 0.2 * i);
  double e = b[0] * b[1] * b[n - 1];
  free(b);
  return e;
}

int main(void) {
  double x[8];
  for (int i = 0; i < 8; i++) x[i] = 0.4 * sin(1.3 * i + 0.2) + 0.1;
  AC_CHECK_SPLIT(qtable, x, 5);
  AC_CHECK_SPLIT(scratch_parent, x, 4);
  AC_CHECK_SPLIT(rewritten, x, 3);
  AC_CHECK_SPLIT(branch_free, x, 4);
  AC_CHECK_SPLIT(per_step, x, 4);
  AC_CHECK_SPLIT(captured, x, 3);
  AC_CHECK_SPLIT(grown, x, 5);
  AC_CHECK_SPLIT(straight, x, 3);
  return ac_done();
}
