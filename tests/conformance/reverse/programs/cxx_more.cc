// More C++: functors, CRTP, non-virtual inheritance, static members, namespaces,
// std::array of structs, structured bindings, std::pair/std::tuple returns,
// constexpr tables, references to arrays, float templates with std:: overloads.
#include "hcheck.h"
#include <array>
#include <cmath>
#include <tuple>
#include <utility>
extern "C" {
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
float __enzyme_autodiff_f(void *, ...);
}
namespace phys {
constexpr double coeff[4] = {1.0, -0.5, 0.25, 0.125};
struct Gauss { double s; double operator()(double r) const { return std::exp(-r * r / (2 * s * s)); } };
template <class D> struct Shape { double area(double r) const { return static_cast<const D *>(this)->scale() * r * r; } };
struct Square : Shape<Square> { double scale() const { return 1.0; } };
struct Disk : Shape<Disk> { double scale() const { return M_PI; } };
struct Base { double w = 2.0; double weigh(double v) const { return w * v; } };
struct Derived : Base { double twice(double v) const { return 2 * weigh(v); } };
struct Util { static double cube(double v) { return v * v * v; } };
std::pair<double, double> polar(double x, double y) { return {std::hypot(x, y), std::atan2(y, x)}; }
std::tuple<double, int, double> stats(const double (&a)[4]) {
  double s = 0, m = a[0]; int k = 0;
  for (int i = 0; i < 4; i++) { s += a[i]; if (a[i] > m) { m = a[i]; k = i; } }
  return {s / 4, k, m};
}
template <typename T> T smooth_abs(T v) { return std::sqrt(v * v + T(1e-2)); }
}  // namespace phys
struct P { double q[2]; };
extern "C" double model(const double *x, int n) {
  (void)n;
  using namespace phys;
  Gauss g{0.8};
  Square sq; Disk dk; Derived dv;
  double r = g(x[0]) + sq.area(x[1]) + dk.area(x[2]) + dv.twice(x[3]) + Util::cube(x[0]);
  auto [rad, ang] = polar(x[1], x[2]);
  double a[4] = {x[0], x[1] * 2, x[2] * x[3], -x[3]};
  auto [mean, idx, mx] = stats(a);
  std::array<P, 2> ps{{{{x[0], x[1]}}, {{x[2], x[3]}}}};
  double acc = 0;
  for (const auto &p : ps) acc += p.q[0] * p.q[1];
  for (int i = 0; i < 4; i++) acc += coeff[i] * x[i] * x[i];
  return r + rad * ang + mean * idx + mx + acc + smooth_abs(x[1]);
}
extern "C" float fmodel(const float *x, int n) {
  float s = 0;
  for (int i = 0; i < n; i++) s += phys::smooth_abs(x[i]) * std::tanh(x[i]) + std::cbrt(x[i] + 2.0f);
  return s;
}
int main() {
  const int n = 4;
  double x[n] = {0.31, -0.47, 0.83, 0.52}, d[n] = {0};
  __enzyme_autodiff((void *)model, enzyme_dup, x, d, enzyme_const, n);
  for (int i = 0; i < n; i++) {
    double xp[n], xm[n], h = hc_h(x[i]);
    for (int k = 0; k < n; k++) xp[k] = xm[k] = x[k];
    xp[i] += h; xm[i] -= h;
    hc_near("model", d[i], (model(xp, n) - model(xm, n)) / (2 * h), 1e-6);
  }
  float xf[n] = {0.3f, -0.4f, 0.8f, 0.5f}, df[n] = {0};
  __enzyme_autodiff_f((void *)fmodel, enzyme_dup, xf, df, enzyme_const, n);
  for (int i = 0; i < n; i++) {
    double t = xf[i], sa = std::sqrt(t * t + 1e-2), th = std::tanh(t);
    double want = t / sa * th + sa * (1 - th * th) + 1.0 / (3 * std::cbrt((t + 2) * (t + 2)));
    hc_near("fmodel", df[i], want, 1e-5);
  }
  return hc_done();
}
