// Forward mode through STL algorithms on active data: std::sort (a median), std::accumulate,
// std::transform with a lambda, std::inner_product; and the reverse gradient of the median.
#include <algorithm>
#include <numeric>
#include <vector>
#include "hcheck.h"
extern "C" {
extern int enzyme_dup, enzyme_const;
double __enzyme_fwddiff(void *, ...);
double __enzyme_autodiff(void *, ...);
}

double median(const double *x, int n) {
  std::vector<double> v(x, x + n);
  std::sort(v.begin(), v.end());
  return v[n / 2] + 0.1 * std::accumulate(v.begin(), v.end(), 0.0);
}
double inner(const double *x, int n) {
  std::vector<double> v(x, x + n), w(n);
  std::transform(v.begin(), v.end(), w.begin(), [](double a) { return std::exp(a); });
  return std::inner_product(v.begin(), v.end(), w.begin(), 0.0);
}

int main() {
  const int n = 5;
  double x[n] = {0.3, -1.2, 0.8, 2.0, 0.5};
  for (int k = 0; k < n; k++) {
    double dx[n] = {0}, g[n] = {0};
    dx[k] = 1.0;
    double want_med = (k == 4 ? 1.0 : 0.0) + 0.1;  // x[4] = 0.5 is the median
    hc_near("median", __enzyme_fwddiff((void *)median, enzyme_dup, x, dx, enzyme_const, n), want_med, 1e-12);
    hc_near("inner", __enzyme_fwddiff((void *)inner, enzyme_dup, x, dx, enzyme_const, n),
            std::exp(x[k]) * (1.0 + x[k]), 1e-12);
    if (k == 0) {
      __enzyme_autodiff((void *)median, enzyme_dup, x, g, enzyme_const, n);
      for (int i = 0; i < n; i++) hc_near("median gradient", g[i], (i == 4 ? 1.0 : 0.0) + 0.1, 1e-12);
    }
  }
  return hc_done();
}
