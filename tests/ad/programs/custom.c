/* Registrations: custom gradient rules (augment + gradient), inactive functions, function_like. */
#include "adcheck.h"
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
void *__enzyme_augmentfwd(void *, ...);
double __enzyme_reverse(void *, ...);

/* the rule deliberately differs from the true derivative (2x) so the test sees it is used */
__attribute__((noinline)) double square(double x) { return x * x; }
typedef struct { void *tape; double primal; } aug_t;
aug_t square_aug(double x) { aug_t r = {0, x * x}; return r; }
double square_grad(double x, double dret, void *tape) { (void)tape; return 10.0 * x * dret; }
void *__enzyme_register_gradient_square[] = {(void *)square, (void *)square_aug, (void *)square_grad};

/* a rule on a pointer argument: y[0] = 3 * x[0] with a rule that adds 7 * dy */
__attribute__((noinline)) void triple(const double *x, double *y) { y[0] = 3.0 * x[0]; }
void *triple_aug(const double *x, const double *dx, double *y, double *dy) { y[0] = 3.0 * x[0]; return 0; }
void triple_grad(const double *x, double *dx, double *y, double *dy, void *tape) {
  dx[0] += 7.0 * dy[0]; dy[0] = 0;
}
void *__enzyme_register_gradient_triple[] = {(void *)triple, (void *)triple_aug, (void *)triple_grad};

__attribute__((noinline)) double noise(double x) { return sin(1000 * x); }
void *__enzyme_inactivefn[] = {(void *)noise};

__attribute__((noinline)) double my_log(double x) { double r = 0; for (double t = x; t > 1.0001; t /= 1.0001) r += 0.0001; return r; }
void *__enzyme_function_like[2] = {(void *)my_log, "log"};

double use_square(double x) { return square(x) + x; }
double use_noise(double x) { return x * noise(x); }
double use_log(double x) { return 2.0 * my_log(x); }
void use_triple(const double *x, double *out) { double y[1]; triple(x, y); out[0] = y[0] * y[0]; }

int main(void) {
  ac_near("custom gradient", __enzyme_autodiff((void *)use_square, 1.5), 10.0 * 1.5 + 1.0, 1e-12);
  ac_near("inactive fn", __enzyme_autodiff((void *)use_noise, 0.3), noise(0.3), 1e-12);
  ac_near("function_like log", __enzyme_autodiff((void *)use_log, 3.0), 2.0 / 3.0, 1e-12);
  double x[1] = {2.0}, dx[1] = {0}, out[1], dout[1] = {1.0};
  __enzyme_autodiff((void *)use_triple, enzyme_dup, x, dx, enzyme_dup, out, dout);
  ac_near("custom pointer rule", dx[0], 7.0 * 2 * 6.0, 1e-12);
  void *tape = __enzyme_augmentfwd((void *)square, 1.5);
  ac_near("custom rule, split mode", __enzyme_reverse((void *)square, 1.5, 2.0, tape), 10.0 * 1.5 * 2.0, 1e-12);
  return ac_done();
}
