/* A plain C program (built without enzyme-build) using the differentiable library. */
#include "hcheck.h"
double energy(const double *x, int n);
void energy_grad(const double *x, double *g, int n);
double energy_dir(const double *x, const double *v, int n);
void energy_dir2(const double *x, const double *v0, const double *v1, int n, double *out);
#define N 6

int main(void) {
  double x[N] = {0.1, -0.6, 0.9, 1.4, -1.2, 0.35}, g[N], v[N], u[N], two[2];
  energy_grad(x, g, N);
  for (int i = 0; i < N; i++) {
    double xp[N], xm[N], h = hc_h(x[i]);
    for (int k = 0; k < N; k++) xp[k] = xm[k] = x[k];
    xp[i] += h; xm[i] -= h;
    hc_near("gradient", g[i], (energy(xp, N) - energy(xm, N)) / (2 * h), 1e-6);
  }
  double gv = 0, gu = 0;
  for (int i = 0; i < N; i++) { v[i] = cos(i + 0.5); u[i] = (i % 3) - 1.0; gv += g[i] * v[i]; gu += g[i] * u[i]; }
  hc_near("directional", energy_dir(x, v, N), gv, 1e-12);
  energy_dir2(x, v, u, N, two);
  hc_near("width 2 lane 0", two[0], gv, 1e-12);
  hc_near("width 2 lane 1", two[1], gu, 1e-12);
  /* gradients again: the shadow is overwritten, not accumulated, by the wrapper */
  energy_grad(x, g, N);
  double again = 0;
  for (int i = 0; i < N; i++) again += g[i] * v[i];
  hc_near("second call", again, gv, 1e-12);
  return hc_done();
}
