// The AD entry points declared as C++ templates and as plain (mangled) C++ functions, with
// markers defined by the program.
#include <cmath>
#include "hcheck.h"
int enzyme_dup, enzyme_const;  // defined here, at global scope
template <typename RT, typename... Args> RT __enzyme_fwddiff(void *, Args...);
template <typename RT, typename... Args> RT __enzyme_autodiff(void *, Args...);
double __enzyme_fwddiff_plain(void *, double, double);  // non-extern-C, non-template
double f(double x) { return std::sin(x) * x; }
double g(const double *x, int n) { double s = 0; for (int i = 0; i < n; i++) s += x[i] * x[i]; return s; }
int main() {
  double want = std::cos(0.5) * 0.5 + std::sin(0.5);
  hc_near("template forward", __enzyme_fwddiff<double>((void *)f, 0.5, 1.0), want, 1e-12);
  hc_near("template reverse", __enzyme_autodiff<double>((void *)f, 0.5), want, 1e-12);
  hc_near("mangled forward", __enzyme_fwddiff_plain((void *)f, 0.5, 1.0), want, 1e-12);
  double x[2] = {1, 2}, dx[2] = {0, 0};
  __enzyme_autodiff<void>((void *)g, enzyme_dup, x, dx, enzyme_const, 2);
  hc_near("template dup 0", dx[0], 2.0, 1e-15);
  hc_near("template dup 1", dx[1], 4.0, 1e-15);
  return hc_done();
}
