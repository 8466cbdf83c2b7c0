/* A static registered helper in a fat TU. */
#include <stdio.h>
double __enzyme_autodiff(void *, ...);
typedef struct { void *tape; double primal; } aug_t;
__attribute__((noinline)) static double helper(double x) { return 2.0 * x * x; }
static aug_t helper_aug(double x) { aug_t r = {0, helper(x)}; return r; }
static double helper_grad(double x, double d, void *t) { (void)t; return 20.0 * x * d; }
void *__enzyme_register_gradient_helper[] = {(void *)helper, (void *)helper_aug, (void *)helper_grad};
double f(double x) { return helper(x) + x; }
double other(double x);
int main(void) { printf("%g want 21, other %g want 5\n", __enzyme_autodiff((void *)f, 1.0), other(1.0)); return 0; }
