/* Structs mixing a float with an int, passed and returned by value: the x86-64 ABI packs
 * {float, int} (and {float, float} pairs inside larger structs) into one i64 register. */
#include "hcheck.h"
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
typedef struct { float val; int idx; } best;
__attribute__((noinline)) static best pick(const float *v, int n) {
  best b = {v[0], 0};
  for (int i = 1; i < n; i++) if (v[i] > b.val) { b.val = v[i]; b.idx = i; }
  return b;
}
__attribute__((noinline)) static double weigh(best b, double w) { return b.val * w * (b.idx + 1); }
double f(const double *x, int n) {
  float v[8];
  for (int i = 0; i < n; i++) v[i] = (float)(x[i] * x[i]);
  best b = pick(v, n);
  return weigh(b, x[0]);
}
int main(void) {
  double x[4] = {0.5, -1.5, 1.0, 0.25}, d[4] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, d, enzyme_const, 4);
  /* max of x^2 is at idx 1: f = x1^2 * x0 * 2 */
  hc_near("d0", d[0], (float)(x[1] * x[1]) * 2, 1e-6);
  hc_near("d1", d[1], 2 * x[1] * x[0] * 2, 1e-6);
  hc_near("d2", d[2], 0, 0);
  hc_near("d3", d[3], 0, 0);
  return hc_done();
}
