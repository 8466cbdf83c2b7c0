// A functor initialized from a constant (clang copies it from @__const.model.g with a
// memcpy) and called before the optimizer runs (ENZYME_BUILD_AD_BEFORE_OPT=1).
#include "hcheck.h"
#include <cmath>
extern "C" {
double __enzyme_autodiff(void *, ...);
}
struct Gauss { double s; double operator()(double r) const { return std::exp(-r * r / (2 * s * s)); } };
extern "C" double model(double x) {
  Gauss g{0.8};
  return g(x) * x;
}
int main() {
  double x = 0.31, g = __enzyme_autodiff((void *)model, x);
  double e = std::exp(-x * x / (2 * 0.64));
  hc_near("d", g, e - x * x / 0.64 * e, 1e-12);
  return hc_done();
}
