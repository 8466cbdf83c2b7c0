/* The same model struct with its pointer members set by main, to static arrays: the
 * optimizer folds the stores into f to the array itself (`@main.scratch`, which gets a
 * shadow), while the loads still go through the member (`@M.2`, which has none). */
#include "hcheck.h"
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
struct model { int n; const double *w; double *scratch; } M;
double f(const double *x) {
  for (int i = 0; i < M.n; i++) M.scratch[i] = M.w[i] * x[i % 4];
  double s = 0;
  for (int i = 0; i < M.n; i++) s += tanh(M.scratch[i]) * M.w[(i + 1) % M.n] * x[(i + 2) % 4];
  return s;
}
int main(void) {
  static double w[6] = {-0.4, -0.2, 0.0, 0.2, 0.4, 0.6}, scratch[6];
  M.n = 6; M.w = w; M.scratch = scratch;
  double x[4] = {0.5, -1.5, 1.0, 0.25}, d[4] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, d);
  for (int i = 0; i < 4; i++) {
    double xp[4], xm[4];
    for (int k = 0; k < 4; k++) { xp[k] = x[k]; xm[k] = x[k]; }
    xp[i] += 1e-6; xm[i] -= 1e-6;
    hc_near("d", d[i], (f(xp) - f(xm)) / 2e-6, 1e-6);
  }
  return hc_done();
}
