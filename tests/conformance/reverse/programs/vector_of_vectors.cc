// A std::vector<std::vector<double>> built inside the differentiated function.
#include "hcheck.h"
#include <vector>
extern "C" {
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
}
double f(const double *x, int n) {
  std::vector<std::vector<double>> m(n, std::vector<double>(n));
  for (int i = 0; i < n; i++) for (int j = 0; j < n; j++) m[i][j] = x[i] * x[j];
  double s = 0;
  for (int i = 0; i < n; i++) s += m[i][i] * m[i][(i + 1) % n];
  return s;
}
int main() {
  const int n = 3;
  double x[n] = {0.5, -1.5, 2.0}, d[n] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, d, enzyme_const, n);
  for (int i = 0; i < n; i++) {
    double xp[n], xm[n], h = hc_h(x[i]);
    for (int k = 0; k < n; k++) xp[k] = xm[k] = x[k];
    xp[i] += h; xm[i] -= h;
    hc_near("d", d[i], (f(xp, n) - f(xm, n)) / (2 * h), 1e-6);
  }
  return hc_done();
}
