/* An RK4 integrator taking its right-hand side as a function pointer (constant at the
 * call site, so it becomes a direct call after propagation). */
#include "hcheck.h"
#include <string.h>
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
typedef void (*rhs_fn)(double t, const double *y, double *dy, const double *p);
static void lotka(double t, const double *y, double *dy, const double *p) {
  (void)t; dy[0] = p[0] * y[0] - p[1] * y[0] * y[1]; dy[1] = p[2] * y[0] * y[1] - p[3] * y[1];
}
__attribute__((noinline)) static void rk4(rhs_fn f, double *y, int n, double t, double h, const double *p) {
  double k1[4], k2[4], k3[4], k4[4], tmp[4];
  f(t, y, k1, p);
  for (int i = 0; i < n; i++) tmp[i] = y[i] + 0.5 * h * k1[i];
  f(t + 0.5 * h, tmp, k2, p);
  for (int i = 0; i < n; i++) tmp[i] = y[i] + 0.5 * h * k2[i];
  f(t + 0.5 * h, tmp, k3, p);
  for (int i = 0; i < n; i++) tmp[i] = y[i] + h * k3[i];
  f(t + h, tmp, k4, p);
  for (int i = 0; i < n; i++) y[i] += h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
}
double simulate(const double *p, const double *y0) {
  double y[2] = {y0[0], y0[1]};
  for (int s = 0; s < 50; s++) rk4(lotka, y, 2, s * 0.02, 0.02, p);
  return y[0] + 2 * y[1];
}
int main(void) {
  double p[4] = {1.1, 0.4, 0.1, 0.4}, dp[4] = {0}, y0[2] = {10, 5}, dy0[2] = {0};
  __enzyme_autodiff((void *)simulate, enzyme_dup, p, dp, enzyme_dup, y0, dy0);
  for (int i = 0; i < 4; i++) {
    double s = p[i], h = hc_h(s);
    p[i] = s + h; double fp = simulate(p, y0); p[i] = s - h; double fm = simulate(p, y0); p[i] = s;
    hc_near("dp", dp[i], (fp - fm) / (2 * h), 1e-6);
  }
  for (int i = 0; i < 2; i++) {
    double s = y0[i], h = hc_h(s);
    y0[i] = s + h; double fp = simulate(p, y0); y0[i] = s - h; double fm = simulate(p, y0); y0[i] = s;
    hc_near("dy0", dy0[i], (fp - fm) / (2 * h), 1e-6);
  }
  return hc_done();
}
