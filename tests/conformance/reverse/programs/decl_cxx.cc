// Declarations of the ABI the way C++ users write them: without extern "C" (mangled),
// as a variadic template, with a non-variadic prototype; markers as plain C++ globals.
#include "hcheck.h"
#include <cmath>
int enzyme_dup, enzyme_const, enzyme_out;
double __enzyme_autodiff(void *, ...);
template <typename RT, typename... Args> RT __enzyme_autodiff(void *, Args...);
double __enzyme_fwddiff(void *, ...);
struct grad2 { double a, b; };
grad2 __enzyme_autodiff(double (*)(double, double), double, double);
static double sq(double x) { return x * x * std::sin(x); }
static double prod(double a, double b) { return a * std::exp(b); }
static double arr(const double *x, int n) { double s = 0; for (int i = 0; i < n; i++) s += x[i] * x[i] * x[i]; return s; }
int main() {
  double g1 = __enzyme_autodiff((void *)sq, 0.7);
  hc_near("mangled variadic", g1, 2 * 0.7 * std::sin(0.7) + 0.49 * std::cos(0.7), 1e-12);
  double x[3] = {1, 2, 3}, dx[3] = {0};
  __enzyme_autodiff<void>((void *)arr, enzyme_dup, x, dx, enzyme_const, 3);
  for (int i = 0; i < 3; i++) hc_near("template", dx[i], 3 * x[i] * x[i], 1e-12);
  double g2 = __enzyme_autodiff<double>((void *)sq, enzyme_out, 0.7);
  hc_near("template double", g2, g1, 1e-15);
  grad2 g3 = __enzyme_autodiff(prod, 2.0, 0.5);
  hc_near("prototype a", g3.a, std::exp(0.5), 1e-12);
  hc_near("prototype b", g3.b, 2.0 * std::exp(0.5), 1e-12);
  return hc_done();
}
