/* Hessian-vector products of the multi-file loss: forward mode over the gradient wrapper
 * (reverse mode with the user's rules inside), in another TU and reached through an archive. */
#include "hcheck.h"
extern int enzyme_dup, enzyme_const;
void __enzyme_fwddiffv(void *, ...);
void loss_grad(const double *w, double *dw, const double *x, double *dx, int n);
#define N 4  /* v[1] = 0: noise() is inactive in the AD but not in the finite differences */
int main(void) {
  double w[N] = {0.3, 0.7, -1.1, 0.4}, x[N] = {1.5, -0.5, 0.25, 2.0}, v[N] = {0.5, 0.0, 0.25, 2.0}, zero[N] = {0};
  double dw[N], dx[N], hdw[N] = {0}, hdx[N] = {0};
  __enzyme_fwddiffv((void *)loss_grad, enzyme_dup, w, v, enzyme_dup, dw, hdw, enzyme_dup, x, zero, enzyme_dup, dx, hdx,
                    enzyme_const, N);
  double h = 1e-6, wp[N], wm[N], gp[N], gm[N], xp[N], xm[N];
  for (int i = 0; i < N; i++) { wp[i] = w[i] + h * v[i]; wm[i] = w[i] - h * v[i]; }
  loss_grad(wp, gp, x, xp, N);
  loss_grad(wm, gm, x, xm, N);
  for (int i = 0; i < N; i++) {
    hc_near("H v (w block)", hdw[i], (gp[i] - gm[i]) / (2 * h), 1e-6);
    hc_near("H v (x block)", hdx[i], (xp[i] - xm[i]) / (2 * h), 1e-6);
  }
  return hc_done();
}
