// Custom derivatives on C++ functions (mangled names): an attribute on a function in a
// namespace, a registration global naming an overloaded function, a rule on a static member
// function, an inactive C++ function, used from forward, vector and reverse mode.
#include <cmath>
#include "hcheck.h"
extern "C" {
extern int enzyme_dup, enzyme_const, enzyme_width;
double __enzyme_fwddiff(void *, ...);
double __enzyme_autodiff(void *, ...);
struct two { double a, b; };
two __enzyme_fwddiff2(void *, ...);
}
struct dual { double primal, tangent; };
struct aug { void *tape; double primal; };

namespace phys {
dual drag_fwd(double v, double dv);
aug drag_aug(double v);
double drag_grad(double v, double dret, void *tape);
// true slope 2 v; the rules say 5 (forward) and 9 (reverse)
// rule names qualified (see fwd_cxxns.cc for the unqualified spelling)
double drag(double v) __attribute__((enzyme("forward", phys::drag_fwd), enzyme("augment", phys::drag_aug),
                                     enzyme("gradient", phys::drag_grad)));
__attribute__((noinline)) double drag(double v) { return v * v; }
dual drag_fwd(double v, double dv) { return {v * v, 5.0 * dv}; }
aug drag_aug(double v) { return {nullptr, v * v}; }
double drag_grad(double, double dret, void *) { return 9.0 * dret; }
}  // namespace phys

// overloads: the registration names the double one through a cast
__attribute__((noinline)) double squash(double x) { return std::tanh(x); }
__attribute__((noinline)) float squash(float x) { return std::tanh(x); }
dual squash_fwd(double x, double dx) { return {std::tanh(x), -3.0 * dx}; }
extern "C" void *__enzyme_register_derivative_squash[] = {(void *)(double (*)(double))squash, (void *)squash_fwd};

struct Table {
  __attribute__((noinline)) static double lookup(double x) { return std::floor(x) + 0.25 * x * x; }
  static dual lookup_fwd(double x, double dx) { return {lookup(x), 11.0 * dx}; }
};
extern "C" void *__enzyme_register_derivative_lookup[] = {(void *)Table::lookup, (void *)Table::lookup_fwd};

__attribute__((noinline)) double rng(double seed) { return std::sin(seed * 12345.678); }
extern "C" void *__enzyme_inactivefn[] = {(void *)rng};

double model(double v) { return phys::drag(v) + 2.0 * squash(v) + Table::lookup(v) + v * rng(v); }

int main() {
  double v = 0.7;
  double want = 5.0 - 6.0 + 11.0 + rng(v);
  hc_near("forward", __enzyme_fwddiff((void *)model, v, 1.0), want, 1e-12);
  two t = __enzyme_fwddiff2((void *)model, enzyme_width, 2, v, 1.0, -0.5);
  hc_near("vector lane 0", t.a, want, 1e-12);
  hc_near("vector lane 1", t.b, -0.5 * want, 1e-12);
  hc_near("reverse attribute", __enzyme_autodiff((void *)phys::drag, v), 9.0, 1e-12);
  return hc_done();
}
