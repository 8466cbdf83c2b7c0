/* A static local workspace pointer grown lazily (allocated on the first call, reused). */
#include "hcheck.h"
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double f(const double *x, int n) {
  static double *w = NULL;
  static int cap = 0;
  if (cap < n) { free(w); w = malloc(n * sizeof *w); cap = n; }
  for (int i = 0; i < n; i++) w[i] = x[i] * x[i];
  double s = 0;
  for (int i = 0; i < n; i++) s += w[i] * w[(i + 1) % n];
  return s;
}
int main(void) {
  double x[4] = {0.5, -1.5, 1.0, 0.25}, d[4] = {0};
  f(x, 4);
  __enzyme_autodiff((void *)f, enzyme_dup, x, d, enzyme_const, 4);
  for (int i = 0; i < 4; i++) hc_near("d", d[i], 2 * x[i] * (x[(i + 1) % 4] * x[(i + 1) % 4] + x[(i + 3) % 4] * x[(i + 3) % 4]), 1e-12);
  return hc_done();
}
