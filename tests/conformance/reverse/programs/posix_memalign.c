/* A workspace from posix_memalign (the pointer arrives through an out-parameter). */
#include "hcheck.h"
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double f(const double *x, int n) {
  double *w = NULL;
  if (posix_memalign((void **)&w, 64, n * sizeof(double)) != 0) return 0;
  for (int i = 0; i < n; i++) w[i] = x[i] * x[i];
  double s = 0;
  for (int i = 0; i < n; i++) s += w[i] * w[i];
  free(w);
  return s;
}
int main(void) {
  double x[3] = {0.5, -1.5, 2.0}, d[3] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, d, enzyme_const, 3);
  for (int i = 0; i < 3; i++) hc_near("d", d[i], 4 * x[i] * x[i] * x[i], 1e-12);
  return hc_done();
}
