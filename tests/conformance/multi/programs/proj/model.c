/* The loss the program differentiates, and registrations for functions of util.c. */
#include "model.h"

int loss_calls;

double loss(const double *w, const double *x, int n) {
  loss_calls++;
  return softclip(dotw(w, x, n)) + fastexp(w[0]) + w[1] * noise(w[1]) + my_log1p(w[2] * w[2]);
}
double chain(double a) { return softclip(a * a) + a; }

typedef struct { void *tape; double primal; } fe_aug_t;
static fe_aug_t fastexp_aug(double x) { fe_aug_t r = {0, fastexp(x)}; return r; }
static double fastexp_grad(double x, double dret, void *tape) { (void)x; (void)tape; return 7.0 * dret; }
void *__enzyme_register_gradient_fastexp[] = {(void *)fastexp, (void *)fastexp_aug, (void *)fastexp_grad};
/* forward rule for fastexp, deliberately 13 instead of the true slope */
static dual_t fastexp_fwd(double x, double dx) { dual_t r = {fastexp(x), 13.0 * dx}; return r; }
void *__enzyme_register_derivative_fastexp[] = {(void *)fastexp, (void *)fastexp_fwd};
void *__enzyme_inactivefn[] = {(void *)noise};
void *__enzyme_function_like[2] = {(void *)my_log1p, "log1p"};
