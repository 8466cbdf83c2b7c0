// Forward and vector mode through everyday C++: a Vec3 with operators, a class with methods,
// templates, std::vector, std::array, lambdas, references, new/delete, float overloads of
// std:: math; tangents checked against central differences.
#include <array>
#include <cmath>
#include <vector>
#include "hcheck.h"
extern "C" {
extern int enzyme_dup, enzyme_dupnoneed, enzyme_const, enzyme_width;
double __enzyme_fwddiff(void *, ...);
float __enzyme_fwddifff(void *, ...);
struct w2 { double a, b; };
w2 __enzyme_fwddiff2(void *, ...);
}

struct Vec3 {
  double x, y, z;
  Vec3 operator+(const Vec3 &o) const { return {x + o.x, y + o.y, z + o.z}; }
  Vec3 operator-(const Vec3 &o) const { return {x - o.x, y - o.y, z - o.z}; }
  Vec3 operator*(double s) const { return {x * s, y * s, z * s}; }
  double dot(const Vec3 &o) const { return x * o.x + y * o.y + z * o.z; }
  double norm() const { return std::sqrt(dot(*this)); }
};
static Vec3 cross(const Vec3 &a, const Vec3 &b) { return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x}; }

// spring chain potential over points stored as a flat array
double springs(const double *p, int n) {
  double e = 0;
  for (int i = 0; i + 1 < n; i++) {
    Vec3 a{p[3 * i], p[3 * i + 1], p[3 * i + 2]}, b{p[3 * i + 3], p[3 * i + 4], p[3 * i + 5]};
    double d = (b - a).norm() - 1.0;
    e += 0.5 * d * d + 0.1 * cross(a, b).norm();
  }
  return e;
}

class Model {
 public:
  explicit Model(int n) : w_(n), n_(n) {}
  void set(int i, double v) { w_[i] = v; }
  double predict(double x) const {
    double s = 0, xp = 1;
    for (int i = 0; i < n_; i++) { s += w_[i] * xp; xp *= x; }
    return std::tanh(s);
  }
 private:
  std::vector<double> w_;
  int n_;
};

// loss of a model built inside from the weights; std::vector allocations on the way
double model_loss(const double *w, int n, double x) {
  Model m(n);
  for (int i = 0; i < n; i++) m.set(i, w[i]);
  auto sq = [](double v) { return v * v; };
  return sq(m.predict(x) - 0.3) + sq(m.predict(-x) + 0.1);
}

template <typename T, size_t K>
T smooth_max(const std::array<T, K> &v, T beta) {
  T m = v[0], s = 0;
  for (size_t i = 1; i < K; i++) m = std::fmax(m, v[i]);
  for (size_t i = 0; i < K; i++) s += std::exp(beta * (v[i] - m));
  return m + std::log(s) / beta;
}
double smax_d(const double *x) { std::array<double, 4> a{x[0], x[1], x[2], x[3]}; return smooth_max(a, 3.0); }
float smax_f(float a, float b) { std::array<float, 3> v{a, b, a * b}; return smooth_max(v, 2.0f) + std::sqrt(a * a + 1.0f); }

// references, new/delete, a lambda capturing by reference
void scale_by_ref(double &v, double s) { v = v * s + std::sin(v); }
double heap_work(const double *x, int n) {
  double *buf = new double[n];
  for (int i = 0; i < n; i++) { buf[i] = x[i]; scale_by_ref(buf[i], 1.5); }
  double acc = 0;
  auto add = [&acc](double v) { acc += std::exp(-v * v); };
  for (int i = 0; i < n; i++) add(buf[i]);
  delete[] buf;
  return acc;
}

// a std::vector passed by reference, differentiated with a shadow vector of the same size
double vec_energy(const std::vector<double> &v) {
  double s = 0;
  for (size_t i = 0; i < v.size(); i++) s += std::sin(v[i]) * v[i];
  return s;
}
double call_vec_energy(const std::vector<double> *v) { return vec_energy(*v); }

template <double (*F)(const double *, int)>
static double fd_dir(const double *x, const double *d, int n) {
  std::vector<double> xp(x, x + n), xm(x, x + n);
  const double h = 1e-6;
  for (int i = 0; i < n; i++) { xp[i] += h * d[i]; xm[i] -= h * d[i]; }
  return (F(xp.data(), n) - F(xm.data(), n)) / (2 * h);
}
static double smax_n(const double *x, int) { return smax_d(x); }
static double springs_n(const double *p, int) { return springs(p, 4); }
static double loss_n(const double *w, int n) { return model_loss(w, n, 0.7); }

int main() {
  double p[12] = {0.2, -0.1, 0.3, 1.1, 0.1, 0, 1.9, 0.5, 0.2, 2.5, 1.4, -0.3}, dp[12], dp2[12];
  for (int i = 0; i < 12; i++) { dp[i] = std::cos(1.0 + i); dp2[i] = (i == 4); }
  hc_near("springs", __enzyme_fwddiff((void *)springs, enzyme_dup, p, dp, enzyme_const, 4), fd_dir<springs_n>(p, dp, 12), 1e-6);
  w2 sv = __enzyme_fwddiff2((void *)springs, enzyme_width, 2, enzyme_dup, p, dp, dp2, enzyme_const, 4);
  hc_near("springs w2 lane 0", sv.a, fd_dir<springs_n>(p, dp, 12), 1e-6);
  hc_near("springs w2 lane 1", sv.b, fd_dir<springs_n>(p, dp2, 12), 1e-6);

  double w[4] = {0.1, -0.4, 0.25, 0.05}, dw[4] = {1.0, 0.5, -0.25, 2.0};
  hc_near("model", __enzyme_fwddiff((void *)model_loss, enzyme_dup, w, dw, enzyme_const, 4, 0.7, 0.0),
          fd_dir<loss_n>(w, dw, 4), 1e-6);
  double h = 1e-6;
  hc_near("model dx", __enzyme_fwddiff((void *)model_loss, enzyme_const, w, enzyme_const, 4, 0.7, 1.0),
          (model_loss(w, 4, 0.7 + h) - model_loss(w, 4, 0.7 - h)) / (2 * h), 1e-6);

  double x[4] = {0.2, 0.9, 0.85, -1.0}, dx[4] = {1, -1, 0.5, 2};
  hc_near("smooth max", __enzyme_fwddiff((void *)smax_d, x, dx), fd_dir<smax_n>(x, dx, 4), 1e-6);
  float fa = 0.7f, fb = 1.3f;
  double ev = std::exp(2.0 * (0.7 * 1.3 - 1.3)), eb = 1.0;  // m = b
  double s = std::exp(2.0 * (0.7 - 1.3)) + eb + ev;
  double da = (std::exp(2.0 * (0.7 - 1.3)) + ev * 1.3) / s + 0.7 / std::sqrt(0.49 + 1.0);
  hc_near("smooth max float", __enzyme_fwddifff((void *)smax_f, fa, 1.0f, fb, 0.0f), da, 1e-5);

  double xs[5] = {0.3, -0.2, 0.8, 1.5, -0.9}, dxs[5] = {0.5, 1, -1, 0.25, 0.75};
  hc_near("heap work", __enzyme_fwddiff((void *)heap_work, enzyme_dup, xs, dxs, enzyme_const, 5),
          fd_dir<heap_work>(xs, dxs, 5), 1e-6);

  std::vector<double> v = {0.3, -0.7, 1.1}, dv = {1.0, 0.0, 2.0};
  double want = 0;
  for (int i = 0; i < 3; i++) want += (std::cos(v[i]) * v[i] + std::sin(v[i])) * dv[i];
  hc_near("shadow std::vector", __enzyme_fwddiff((void *)call_vec_energy, enzyme_dup, &v, &dv), want, 1e-12);
  hc_near("shadow std::vector unchanged", dv[2], 2.0, 0.0);
  return hc_done();
}
