/* memcpy of an array of structs mixing double and float fields (run-time length). */
#include "hcheck.h"
#include <string.h>
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
struct rec { double v; float w; };
double f(const double *x, int n) {
  struct rec a[8], b[8];
  for (int i = 0; i < n; i++) { a[i].v = x[i]; a[i].w = (float)x[i]; }
  memcpy(b, a, sizeof(struct rec) * n);
  double s = 0;
  for (int i = 0; i < n; i++) s += b[i].v * b[i].v + b[i].w;
  return s;
}
int main(void) {
  double x[4] = {0.5, -1.0, 2.0, 0.25}, d[4] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, d, enzyme_const, 4);
  for (int i = 0; i < 4; i++) hc_near("d", d[i], 2 * x[i] + 1.0, 1e-7);
  return hc_done();
}
