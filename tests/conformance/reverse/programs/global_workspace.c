/* A global workspace pointer allocated once by main and used by the differentiated
 * function for intermediates (a common way to avoid malloc in hot code). */
#include "hcheck.h"
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
static double *g_work;
static int g_n;
double f(const double *x, int n) {
  for (int i = 0; i < n; i++) g_work[i] = x[i] * x[i];
  double s = 0;
  for (int i = 0; i < n; i++) s += g_work[i] * g_work[(i + 1) % n];
  return s;
}
int main(void) {
  g_n = 4;
  g_work = malloc(g_n * sizeof(double));
  double x[4] = {0.5, -1.5, 1.0, 0.25}, d[4] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, d, enzyme_const, 4);
  for (int i = 0; i < 4; i++) {
    double want = 2 * x[i] * (x[(i + 1) % 4] * x[(i + 1) % 4] + x[(i + 3) % 4] * x[(i + 3) % 4]);
    hc_near("d", d[i], want, 1e-12);
  }
  free(g_work);
  return hc_done();
}
