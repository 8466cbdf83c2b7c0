/* Gradient of a loss spread over several TUs: rules attached in a shared header, defined
 * in another TU, and registration globals, checked against the closed forms of the rules. */
#include <string.h>
#include "hcheck.h"
#include "model.h"
extern int enzyme_dup, enzyme_const, enzyme_out;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
#define N 4

int main(void) {
  double w[N] = {0.3, 0.7, -1.1, 0.4}, x[N] = {1.5, -0.5, 0.25, 2.0}, dw[N] = {0}, dx[N] = {0};
  __enzyme_autodiff((void *)loss, enzyme_dup, w, dw, enzyme_dup, x, dx, enzyme_const, N);
  hc_near("loss runs once", loss_calls, 1, 0);
  hc_near("softclip augment once", softclip_aug_calls, 1, 0);
  hc_near("softclip gradient once", softclip_grad_calls, 1, 0);
  hc_near("dotw augment once", dotw_aug_calls, 1, 0);
  hc_near("dotw gradient once", dotw_grad_calls, 1, 0);
  hc_near("tape freed", tapes_live, 0, 0);
  for (int i = 0; i < N; i++) {
    double want = 3.0 * 2.0 * x[i];
    if (i == 0) want += 7.0;
    if (i == 1) want += noise(w[1]);
    if (i == 2) want += 2.0 * w[2] / (1.0 + w[2] * w[2]);
    hc_near("dw", dw[i], want, 1e-9);
    hc_near("dx", dx[i], 3.0 * w[i], 1e-12);
  }
  /* forward rule from the same header: chain' = -2 * 2a + 1 */
  hc_near("forward rule", __enzyme_fwddiff((void *)chain, 0.6, 1.0), -2.0 * 1.2 + 1.0, 1e-12);
  /* reverse through the same chain: softclip' = 3 */
  hc_near("reverse rule", __enzyme_autodiff((void *)chain, 0.6), 3.0 * 1.2 + 1.0, 1e-12);
#ifndef KERNELS_WITHOUT_BODIES
  /* forward mode through the whole loss: dotw has only reverse rules, so its body is used */
  double v[N] = {1.0, -0.5, 2.0, 0.25}, vd = 0;
  for (int i = 0; i < N; i++) vd += x[i] * v[i];
  double want_fwd = -2.0 * vd + 13.0 * v[0] + noise(w[1]) * v[1] + 2.0 * w[2] * v[2] / (1.0 + w[2] * w[2]);
  hc_near("forward through loss", __enzyme_fwddiff((void *)loss, enzyme_dup, w, v, enzyme_const, x, enzyme_const, N),
          want_fwd, 1e-9);
#endif
  return hc_done();
}
