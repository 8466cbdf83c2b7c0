// smoothabs and its (deliberately scaled) rules live in their own TU.
#include "system.hpp"

int smoothabs_grad_calls;
double smoothabs(double x) { return std::sqrt(x * x + 1e-3); }
sa_aug_t smoothabs_aug(double x) { return {nullptr, smoothabs(x)}; }
double smoothabs_grad(double x, double dret, void *) { smoothabs_grad_calls++; (void)x; return 4.0 * dret; }
