/* A differentiable library with a static helper registered with a gradient rule (helper = 2x^2). */
#include <math.h>
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
__attribute__((noinline)) static double helper(double x) { return 2.0 * x * x; }
typedef struct { void *tape; double primal; } aug_t;
static aug_t helper_aug(double x) { aug_t r = {0, helper(x)}; return r; }
static double helper_grad(double x, double d, void *t) { (void)t; return 2.0 * 10.0 * x * d; }
void *__enzyme_register_gradient_helper[] = {(void *)helper, (void *)helper_aug, (void *)helper_grad};
double f_a(double x) { return helper(x) + x; }
double grad_a(double x) { return __enzyme_autodiff((void *)f_a, x); }
