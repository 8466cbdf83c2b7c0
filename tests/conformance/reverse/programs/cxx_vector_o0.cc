// std::vector and std::array basics (sized construction, resize/at, push_back, copies,
// a class with a vector member, new[]/delete[]) — meant for -O0, where nothing is inlined.
#include "hcheck.h"
#include <cmath>
#include <vector>
#include <array>
extern "C" {
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
}
double f1(const double *x, int n) { std::vector<double> v(n); for (int i = 0; i < n; i++) v[i] = x[i] * x[i]; double s = 0; for (double e : v) s += e * e; return s; }
double f2(const double *x, int n) { std::vector<double> v; v.resize(n); for (int i = 0; i < n; i++) v.at(i) = std::sin(x[i]); double s = 0; for (size_t i = 0; i < v.size(); i++) s += v[i] * x[i]; return s; }
double f3(const double *x, int n) { std::vector<double> v; for (int i = 0; i < n; i++) v.push_back(x[i] * 2); double s = 0; for (double e : v) s += e * e; return s; }
double f4(const double *x, int n) { std::array<double, 4> a{}; for (int i = 0; i < n; i++) a[i] = x[i]; std::array<double, 4> b = a; double s = 0; for (int i = 0; i < n; i++) s += b[i] * a[(i + 1) % n]; return s; }
struct M { std::vector<double> w; double eval(const double *x) const { double s = 0; for (size_t i = 0; i < w.size(); i++) s += w[i] * x[i] * x[i]; return s; } };
double f5(const double *x, int n) { M m; m.w.assign(n, 0.0); for (int i = 0; i < n; i++) m.w[i] = 1.0 + i; return m.eval(x); }
double f7(const double *x, int n) { double *p = new double[n]; for (int i = 0; i < n; i++) p[i] = std::exp(x[i]); double s = 0; for (int i = 0; i < n; i++) s += p[i]; delete[] p; return s; }
int main() {
  const int n = 4;
  double x[n] = {0.31, -0.47, 0.83, 0.12}, d[n] = {0};
  typedef double (*fn)(const double *, int);
  const fn fs[] = {f1, f2, f3, f4, f5, f7};
  const char *names[] = {"f1", "f2", "f3", "f4", "f5", "f7"};
  for (int k = 0; k < (int)(sizeof fs / sizeof fs[0]); k++) {
    for (int i = 0; i < n; i++) d[i] = 0;
    switch (k) {
      case 0: __enzyme_autodiff((void *)f1, enzyme_dup, x, d, enzyme_const, n); break;
      case 1: __enzyme_autodiff((void *)f2, enzyme_dup, x, d, enzyme_const, n); break;
      case 2: __enzyme_autodiff((void *)f3, enzyme_dup, x, d, enzyme_const, n); break;
      case 3: __enzyme_autodiff((void *)f4, enzyme_dup, x, d, enzyme_const, n); break;
      case 4: __enzyme_autodiff((void *)f5, enzyme_dup, x, d, enzyme_const, n); break;
      case 5: __enzyme_autodiff((void *)f7, enzyme_dup, x, d, enzyme_const, n); break;
    }
    for (int i = 0; i < n; i++) {
      double xp[n], xm[n], h = hc_h(x[i]);
      for (int m = 0; m < n; m++) xp[m] = xm[m] = x[m];
      xp[i] += h; xm[i] -= h;
      hc_near(names[k], d[i], (fs[k](xp, n) - fs[k](xm, n)) / (2 * h), 1e-6);
    }
  }
  return hc_done();
}
