/* Second order with arrays: an energy gradient computed with enzyme_dup on local arrays
 * inside the differentiated loss (force matching), reverse over reverse; and reverse over
 * forward (a directional derivative inside the loss). */
#include "hcheck.h"
#include <string.h>
extern int enzyme_dup, enzyme_const, enzyme_dupnoneed;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
enum { N = 4 };
double energy(const double *q, const double *k, int n) {
  double e = 0;
  for (int i = 0; i + 1 < n; i++) { double d = q[i + 1] - q[i]; e += 0.5 * k[i] * d * d + 0.1 * d * d * d * d; }
  return e;
}
/* loss(k) = sum_i (F_i(q; k) - Ft_i)^2, F = -dE/dq */
double force_loss(const double *k, int n) {
  double q[N] = {0.0, 1.1, 1.9, 3.2}, dq[N] = {0}, target[N] = {-1, 0.5, -0.2, 0.7};
  __enzyme_autodiff((void *)energy, enzyme_dup, q, dq, enzyme_const, k, enzyme_const, n);
  double s = 0;
  for (int i = 0; i < n; i++) { double r = -dq[i] - target[i]; s += r * r; }
  return s;
}
/* loss2(k) = (dE/dq . v)^2 via forward mode */
double dir_loss(const double *k, int n) {
  double q[N] = {0.0, 1.1, 1.9, 3.2}, v[N] = {1, -1, 0.5, 0.25};
  double t = __enzyme_fwddiff((void *)energy, enzyme_dup, q, v, enzyme_const, k, enzyme_const, n);
  return t * t;
}
int main(void) {
  double k[N] = {2.0, 1.5, 3.0, 0.0};
  double dk[N] = {0}, dk2[N] = {0};
  __enzyme_autodiff((void *)force_loss, enzyme_dup, k, dk, enzyme_const, N);
  __enzyme_autodiff((void *)dir_loss, enzyme_dup, k, dk2, enzyme_const, N);
  for (int i = 0; i < N - 1; i++) {
    double kp[N], km[N], h = hc_h(k[i]);
    memcpy(kp, k, sizeof kp); memcpy(km, k, sizeof km);
    kp[i] += h; km[i] -= h;
    hc_near("reverse over reverse", dk[i], (force_loss(kp, N) - force_loss(km, N)) / (2 * h), 1e-6);
    hc_near("reverse over forward", dk2[i], (dir_loss(kp, N) - dir_loss(km, N)) / (2 * h), 1e-6);
  }
  return hc_done();
}
