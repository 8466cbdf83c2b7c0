/* A second library with its own static helper of the same name (helper = 3x^2). */
#include <math.h>
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
__attribute__((noinline)) static double helper(double x) { return 3.0 * x * x; }
typedef struct { void *tape; double primal; } aug_t;
static aug_t helper_aug(double x) { aug_t r = {0, helper(x)}; return r; }
static double helper_grad(double x, double d, void *t) { (void)t; return 3.0 * 10.0 * x * d; }
void *__enzyme_register_gradient_helper[] = {(void *)helper, (void *)helper_aug, (void *)helper_grad};
double f_b(double x) { return helper(x) + x; }
double grad_b(double x) { return __enzyme_autodiff((void *)f_b, x); }
