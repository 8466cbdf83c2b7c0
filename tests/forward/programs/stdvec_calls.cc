// Forward mode through std::vector members left as calls (AD before optimization, -O0
// shapes): operator[] returns a pointer into the vector's block, so the vector object needs
// a shadow whose block the shadow allocator call makes; constructors, sort and destructors.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>
extern "C" {
extern int enzyme_dup, enzyme_const;
double __enzyme_fwddiff(void *, ...);
}

static int failures = 0, checks = 0;
static void near(const char *what, double got, double want) {
  checks++;
  if (!(std::fabs(got - want) <= 1e-6 * (std::fabs(want) > 1 ? std::fabs(want) : 1.0))) {
    failures++;
    std::fprintf(stderr, "MISMATCH %s: got %.12g want %.12g\n", what, got, want);
  }
}

double product(const double *w, int n) {
  std::vector<double> v(n);
  for (int i = 0; i < n; i++) v[i] = std::sin(w[i]);
  return v[0] * v[1] + v[n - 1];
}

struct Model {
  std::vector<double> w;
  explicit Model(int n) : w(n) {}
  void set(int i, double v) { w[i] = v; }
  double get(int i) const { return w[i]; }
};
double through_methods(const double *x, int n) {
  Model m(n);
  for (int i = 0; i < n; i++) m.set(i, x[i] * x[i]);
  return m.get(0) * m.get(1) + m.get(2);
}

double median(const double *x, int n) {
  std::vector<double> v(x, x + n);
  std::sort(v.begin(), v.end());
  return v[n / 2];
}

typedef double (*fn_t)(const double *, int);
static double fd(fn_t f, const double *x, const double *dx, int n) {
  double xp[8], xm[8], h = 1e-6;
  for (int i = 0; i < n; i++) { xp[i] = x[i] + h * dx[i]; xm[i] = x[i] - h * dx[i]; }
  return (f(xp, n) - f(xm, n)) / (2 * h);
}

int main() {
  double x[5] = {0.3, -1.2, 0.8, 2.0, 0.5}, dx[5] = {0.4, 1.0, -0.3, 0.2, 1.0};
  near("product", __enzyme_fwddiff((void *)product, enzyme_dup, x, dx, enzyme_const, 5), fd(product, x, dx, 5));
  near("through_methods", __enzyme_fwddiff((void *)through_methods, enzyme_dup, x, dx, enzyme_const, 5),
       fd(through_methods, x, dx, 5));
  near("median", __enzyme_fwddiff((void *)median, enzyme_dup, x, dx, enzyme_const, 5), fd(median, x, dx, 5));
  if (failures) { std::printf("FAIL %d/%d\n", failures, checks); return 1; }
  std::printf("ok %d\n", checks);
  return 0;
}
