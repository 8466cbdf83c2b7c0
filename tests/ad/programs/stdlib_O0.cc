// libstdc++ at -O0 through the wrapper: std::vector from a range (std::copy → memmove in
// __copy_m<double>), std::transform, push_back of a struct (relocation by memmove), and
// std::sort of active values.
#include "adcheck.h"
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>
extern "C" {
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
}
struct P2 { double x, y; };

double ranges(const double *x, int n) {
  std::vector<double> v(x, x + n);
  std::transform(v.begin(), v.end(), v.begin(), [](double a) { return a * a; });
  return std::accumulate(v.begin(), v.end(), 0.0) + std::inner_product(v.begin(), v.end(), x, 0.0);
}
double pushed(const double *q, int n) {
  std::vector<P2> pts;
  for (int i = 0; i < n; i++) pts.push_back({q[2 * i], q[2 * i + 1]});
  double e = 0;
  for (const P2 &p : pts) e += p.x * p.x * p.y;
  return e;
}
double sorted(const double *x, int n) {
  std::vector<double> v(n);
  for (int i = 0; i < n; i++) v[i] = std::exp(x[i]);
  std::sort(v.begin(), v.end());
  double s = 0;
  for (int i = 0; i < n; i++) s += v[i] * (i + 1);
  return s;
}

int main() {
  double x[3] = {0.5, -1.5, 2.0}, d[3] = {0};
  __enzyme_autodiff((void *)ranges, enzyme_dup, x, d, enzyme_const, 3);
  for (int i = 0; i < 3; i++) ac_near("ranges", d[i], 2 * x[i] + 3 * x[i] * x[i], 1e-12);
  double q[6] = {0.5, 1.5, -0.25, 2.0, 1.0, -1.0}, dq[6] = {0};
  __enzyme_autodiff((void *)pushed, enzyme_dup, q, dq, enzyme_const, 3);
  for (int i = 0; i < 3; i++) {
    ac_near("push_back dx", dq[2 * i], 2 * q[2 * i] * q[2 * i + 1], 1e-12);
    ac_near("push_back dy", dq[2 * i + 1], q[2 * i] * q[2 * i], 1e-12);
  }
  double ds[3] = {0};
  __enzyme_autodiff((void *)sorted, enzyme_dup, x, ds, enzyme_const, 3);
  int rank[3] = {1, 0, 2};   /* exp(-1.5) < exp(0.5) < exp(2) */
  for (int i = 0; i < 3; i++) ac_near("sort", ds[i], std::exp(x[i]) * (rank[i] + 1), 1e-12);
  return ac_done();
}
