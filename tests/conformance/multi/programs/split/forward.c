/* The augmented forward pass, in its own TU (with its own static helper named helper). */
#include "layer.h"
void *__enzyme_augmentfwd(void *, ...);
static int helper(int n) { return n; }

void *run_forward(const double *x, double *dx, const double *w, double *out, double *dout, int n) {
  return __enzyme_augmentfwd((void *)layer, enzyme_dup, x, dx, enzyme_const, w, enzyme_dup, out, dout,
                             enzyme_const, helper(n));
}
