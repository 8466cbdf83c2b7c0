/* A hand-written byte-wise memcpy (char loop) copying doubles. */
#include "hcheck.h"
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
static void bytecopy(void *dst, const void *src, size_t len) {
  char *d = dst;
  const char *s = src;
  for (size_t i = 0; i < len; i++) d[i] = s[i];
}
double f(const double *x, int n) {
  double v[8], w[8];
  for (int i = 0; i < n; i++) v[i] = x[i] * x[i];
  bytecopy(w, v, n * sizeof(double));
  double s = 0;
  for (int i = 0; i < n; i++) s += w[i] * (i + 1);
  return s;
}
int main(void) {
  double x[4] = {0.5, -1.5, 1.0, 0.25}, d[4] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, d, enzyme_const, 4);
  for (int i = 0; i < 4; i++) hc_near("d", d[i], 2 * x[i] * (i + 1), 1e-12);
  return hc_done();
}
