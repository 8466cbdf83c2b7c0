/* A global workspace pointer with a declared shadow (Enzyme's way): the shadow pointer global
 * points at a zeroed buffer of the same size, so intermediates stored through the workspace
 * carry derivatives. Both declaration forms: the registration global and the attribute. */
#include "hcheck.h"
#include <enzyme/enzyme.h>
static double *g_work, *d_work;
void *__enzyme_shadow_global_g_work[2] = {(void *)&g_work, (void *)&d_work};
double *d_tmp;
double *g_tmp __attribute__((enzyme_shadow(d_tmp)));
double f(const double *x, int n) {
  for (int i = 0; i < n; i++) g_work[i] = x[i] * x[i];
  for (int i = 0; i < n; i++) g_tmp[i] = sin(g_work[(i + 1) % n]);
  double s = 0;
  for (int i = 0; i < n; i++) s += g_work[i] * g_tmp[i];
  return s;
}
static double fd(const double *x, int i) {
  double xp[4], xm[4], h = hc_h(x[i]);
  for (int k = 0; k < 4; k++) { xp[k] = x[k]; xm[k] = x[k]; }
  xp[i] += h; xm[i] -= h;
  return (f(xp, 4) - f(xm, 4)) / (2 * h);
}
int main(void) {
  g_work = malloc(4 * sizeof(double)); d_work = calloc(4, sizeof(double));
  g_tmp = malloc(4 * sizeof(double)); d_tmp = calloc(4, sizeof(double));
  double x[4] = {0.5, -1.5, 1.0, 0.25}, d[4] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, d, enzyme_const, 4);
  for (int i = 0; i < 4; i++) hc_near("reverse", d[i], fd(x, i), 1e-6);
  for (int i = 0; i < 4; i++) hc_near("workspace shadow consumed", d_work[i] + d_tmp[i], 0, 0);
  for (int i = 0; i < 4; i++) {
    double e[4] = {0};
    e[i] = 1;
    hc_near("forward", __enzyme_fwddiff((void *)f, enzyme_dup, x, e, enzyme_const, 4), d[i], 1e-12);
  }
  free(g_work); free(d_work); free(g_tmp); free(d_tmp);
  return hc_done();
}
