// std::sort of a std::vector of active values at -O0: the program builds, then crashes
// in the reverse sweep of std::__unguarded_linear_insert (a plain array works).
#include "hcheck.h"
#include <algorithm>
#include <cmath>
#include <vector>
extern "C" {
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
}
double f(const double *x, int n) {
  std::vector<double> v(n);
  for (int i = 0; i < n; i++) v[i] = std::exp(x[i]);
  std::sort(v.begin(), v.end());
  return v[0] * 3 + v[1] * 2 + v[n - 1];
}
int main() {
  const int n = 5;
  double x[n] = {0.31, -0.47, 0.83, 0.12, -0.05}, d[n] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, d, enzyme_const, n);
  // sorted: -0.47, -0.05, 0.12, 0.31, 0.83
  for (int i = 0; i < n; i++) {
    double w = x[i] == -0.47 ? 3 : x[i] == -0.05 ? 2 : x[i] == 0.83 ? 1 : 0;
    hc_near("d", d[i], w * std::exp(x[i]), 1e-12);
  }
  return hc_done();
}
