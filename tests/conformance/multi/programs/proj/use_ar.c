/* A program whose only AD calls are inside archive members (the gradient wrappers). */
#include "hcheck.h"
void loss_grad(const double *w, double *dw, const double *x, double *dx, int n);
double chain_tangent(double a, double da);
int main(void) {
  double w[4] = {0.3, 0.7, -1.1, 0.4}, x[4] = {1.5, -0.5, 0.25, 2.0}, dw[4], dx[4];
  loss_grad(w, dw, x, dx, 4);
  for (int i = 0; i < 4; i++) hc_near("dx", dx[i], 3.0 * w[i], 1e-12);
  hc_near("dw0", dw[0], 6.0 * x[0] + 7.0, 1e-9);
  hc_near("dw3", dw[3], 6.0 * x[3], 1e-9);
  hc_near("forward rule", chain_tangent(0.6, 1.0), -1.4, 1e-12);
  return hc_done();
}
