/* Custom derivatives of the kernels; deliberately not the true derivatives (softclip' = 3,
 * forward softclip' = -2, d dotw / dw = 2 x) so that an ignored rule is visible. */
#include <stdlib.h>
#include <string.h>
#include "model.h"

int softclip_aug_calls, softclip_grad_calls, dotw_aug_calls, dotw_grad_calls, tapes_live;

aug_t softclip_aug(double x) { softclip_aug_calls++; aug_t r = {0, softclip(x)}; return r; }
double softclip_grad(double x, double dret, void *tape) { (void)x; (void)tape; softclip_grad_calls++; return 3.0 * dret; }
dual_t softclip_fwd(double x, double dx) { dual_t r = {softclip(x), -2.0 * dx}; return r; }

/* the tape keeps a copy of x, as a rule for a kernel that overwrites x would have to */
aug_t dotw_aug(const double *w, double *dw, const double *x, double *dx, int n) {
  (void)dw; (void)dx;
  dotw_aug_calls++;
  double *copy = malloc(n * sizeof *copy);
  memcpy(copy, x, n * sizeof *copy);
  tapes_live++;
  aug_t r = {copy, dotw(w, x, n)};
  return r;
}
void dotw_grad(const double *w, double *dw, const double *x, double *dx, int n, double dret, void *tape) {
  (void)x;
  const double *xs = tape;
  dotw_grad_calls++;
  for (int i = 0; i < n; i++) { dw[i] += 2.0 * xs[i] * dret; dx[i] += w[i] * dret; }
  free(tape);
  tapes_live--;
}
