/* kernel_rules.c: the hand-written derivative of phys_kernel (attached in physics.h).
 *
 * k(r2) = (r2 + eps^2)^(-3/2)  =>  dk/dr2 = -3/2 (r2 + eps^2)^(-5/2) = -3/2 k / (r2 + eps^2).
 * The augmented pass returns the primal and no tape (the gradient recomputes from r2).
 */
#include <math.h>
#include "physics.h"

long phys_kernel_grad_calls = 0;

phys_kernel_aug_t phys_kernel_aug(double r2) {
  phys_kernel_aug_t out = {0, phys_kernel(r2)};
  return out;
}

double phys_kernel_grad(double r2, double dret, void *tape) {
  (void)tape;
  phys_kernel_grad_calls++;
  double s = r2 + PHYS_SOFTENING * PHYS_SOFTENING;
  return dret * (-1.5 / (s * s * sqrt(s)));
}
