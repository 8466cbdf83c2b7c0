/* The reverse pass, in another TU than the forward pass that made its tape. */
#include "layer.h"
void __enzyme_reverse(void *, ...);

void run_backward(const double *x, double *dx, const double *w, double *out, double *dout, int n, void *tape) {
  __enzyme_reverse((void *)layer, enzyme_dup, x, dx, enzyme_const, w, enzyme_dup, out, dout, enzyme_const, n, tape);
}
