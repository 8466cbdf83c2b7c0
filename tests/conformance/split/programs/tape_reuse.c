/* Tape memory reuse under pressure: dynamic-trip-count loops (per-iteration records that
 * grow the tape) in split tapes kept alive across combined gradients of growing sizes,
 * reversed out of order, repeated so freed blocks get reused. */
#include "hcheck.h"
#include <string.h>
extern int enzyme_dup, enzyme_const;
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);
double __enzyme_autodiff(void *, ...);
double walk(const double *x, int n) {
  double s = 0;
  int i = 0;
  while (i < n && s < 1e300) { s += sin(x[i % 3] * (1 + i % 7)) * x[(i + 1) % 3] * 1e-3; i++; }
  return s;
}
static void grad_ref(int n, const double *x, double *g) {
  for (int i = 0; i < 3; i++) {
    double xp[3], xm[3], h = 1e-6;
    memcpy(xp, x, sizeof xp); memcpy(xm, x, sizeof xm);
    xp[i] += h; xm[i] -= h;
    g[i] = (walk(xp, n) - walk(xm, n)) / (2 * h);
  }
}
int main(void) {
  double x[3] = {0.3, -0.7, 0.5};
  const int sizes[4] = {50, 70000, 3, 200000};
  double ref[4][3];
  for (int k = 0; k < 4; k++) grad_ref(sizes[k], x, ref[k]);
  for (int rep = 0; rep < 3; rep++) {
    double d[4][3];
    memset(d, 0, sizeof d);
    void *t0 = __enzyme_augmentfwd((void *)walk, enzyme_dup, x, d[0], enzyme_const, sizes[0]);
    void *t1 = __enzyme_augmentfwd((void *)walk, enzyme_dup, x, d[1], enzyme_const, sizes[1]);
    __enzyme_autodiff((void *)walk, enzyme_dup, x, d[3], enzyme_const, sizes[3]);
    void *t2 = __enzyme_augmentfwd((void *)walk, enzyme_dup, x, d[2], enzyme_const, sizes[2]);
    __enzyme_reverse((void *)walk, enzyme_dup, x, d[1], enzyme_const, sizes[1], 1.0, t1);
    __enzyme_reverse((void *)walk, enzyme_dup, x, d[2], enzyme_const, sizes[2], 1.0, t2);
    __enzyme_reverse((void *)walk, enzyme_dup, x, d[0], enzyme_const, sizes[0], 1.0, t0);
    for (int k = 0; k < 4; k++)
      for (int i = 0; i < 3; i++) hc_near("tape reuse", d[k][i], ref[k][i], 1e-5);
  }
  return hc_done();
}
