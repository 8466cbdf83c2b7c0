// std::vector built from a range, std::transform with a lambda, accumulate, inner_product,
// max_element, std::min.
#include "hcheck.h"
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>
extern "C" {
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
}
double f(const double *x, int n) {
  std::vector<double> v(x, x + n);
  std::transform(v.begin(), v.end(), v.begin(), [](double a) { return a * a; });
  double s = std::accumulate(v.begin(), v.end(), 0.0);
  double ip = std::inner_product(x, x + n, v.begin(), 0.0);
  return s + ip + *std::max_element(x, x + n) + std::min(x[0], x[1]);
}
int main() {
  const int n = 4;
  double x[n] = {0.31, -0.47, 0.83, 0.12}, d[n] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, d, enzyme_const, n);
  for (int i = 0; i < n; i++) {
    double xp[n], xm[n], h = hc_h(x[i]);
    for (int k = 0; k < n; k++) xp[k] = xm[k] = x[k];
    xp[i] += h; xm[i] -= h;
    hc_near("d", d[i], (f(xp, n) - f(xm, n)) / (2 * h), 1e-6);
  }
  return hc_done();
}
