/* Calls through a constant table of function pointers: the optimizer folds the loads, and
 * so does the AD-before-optimization path (constant folding only), in both modes. */
#include "fwdcheck.h"
double __enzyme_fwddiff(void *, ...);
double __enzyme_autodiff(void *, ...);
static double k_sin(double v) { return sin(v); }
static double k_sq(double v) { return v * v * 0.5; }
static double k_exp(double v) { return exp(-v) * 3.0; }
static double (*const kernels[3])(double) = {k_sin, k_sq, k_exp};
double apply_table(double v) { return kernels[0](v) + kernels[1](v) * kernels[2](v); }
int main(void) {
  double v = 0.7;
  fc_near("forward", __enzyme_fwddiff((void *)apply_table, v, 1.0), FC_FD(apply_table, v), 1e-6);
  fc_near("reverse", __enzyme_autodiff((void *)apply_table, v), FC_FD(apply_table, v), 1e-6);
  return fc_done();
}
