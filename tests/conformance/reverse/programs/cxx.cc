// C++ in reverse mode: class methods, templates, std::vector, std::array, a Vec3 with
// operator overloads, lambdas called directly, references, new/delete, std:: float overloads.
#include "hcheck.h"
#include <array>
#include <cmath>
#include <vector>

extern "C" {
extern int enzyme_dup, enzyme_const, enzyme_out;
double __enzyme_autodiff(void *, ...);
float __enzyme_autodiff_f(void *, ...);
}

struct Vec3 {
  double x, y, z;
  Vec3 operator+(const Vec3 &o) const { return {x + o.x, y + o.y, z + o.z}; }
  Vec3 operator-(const Vec3 &o) const { return {x - o.x, y - o.y, z - o.z}; }
  Vec3 operator*(double s) const { return {x * s, y * s, z * s}; }
  Vec3 &operator+=(const Vec3 &o) { x += o.x; y += o.y; z += o.z; return *this; }
  double dot(const Vec3 &o) const { return x * o.x + y * o.y + z * o.z; }
  double norm() const { return std::sqrt(dot(*this)); }
};
Vec3 cross(const Vec3 &a, const Vec3 &b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}

class Spring {
 public:
  Spring(double k, double rest) : k_(k), rest_(rest) {}
  double energy(const Vec3 &a, const Vec3 &b) const {
    double d = (a - b).norm() - rest_;
    return 0.5 * k_ * d * d;
  }
 private:
  double k_, rest_;
};

template <typename T, int N>
T poly_eval(const std::array<T, N> &c, T x) {
  T s = 0;
  for (int i = N - 1; i >= 0; --i) s = s * x + c[i];
  return s;
}

template <typename T>
T sumsq(const std::vector<T> &v) {
  T s = 0;
  for (const T &e : v) s += e * e;
  return s;
}

extern "C" double springs(const double *pos, int n) {
  std::vector<Vec3> pts;
  for (int i = 0; i < n; i++) pts.push_back({pos[3 * i], pos[3 * i + 1], pos[3 * i + 2]});
  Spring s(2.0, 0.5);
  double e = 0;
  for (int i = 0; i + 1 < n; i++) e += s.energy(pts[i], pts[i + 1]);
  Vec3 c = cross(pts[0], pts[n - 1]);
  Vec3 acc{0, 0, 0};
  for (auto &p : pts) acc += p * 0.1;
  return e + c.dot(c) * 0.25 + acc.norm();
}

extern "C" double templ(const double *x, int n) {
  std::array<double, 4> c{{1.0, -0.5, x[0], x[1]}};
  std::vector<double> v(x, x + n);
  auto scaled = [&](double k) { return sumsq(v) * k; };  // a lambda called directly
  double r = poly_eval<double, 4>(c, x[2]) + scaled(0.3);
  double *heap = new double[n];
  for (int i = 0; i < n; i++) heap[i] = std::exp(x[i] * 0.2);
  double &first = heap[0];
  first *= 2;  // through a reference
  for (int i = 0; i < n; i++) r += heap[i];
  delete[] heap;
  Vec3 *p = new Vec3{x[3], x[4], x[5]};
  r += p->norm();
  delete p;
  return r;
}

extern "C" float flt(const float *x, int n) {
  float s = 0;
  for (int i = 0; i < n; i++) s += std::sin(x[i]) * std::exp(x[i]) + std::sqrt(1.0f + x[i] * x[i]) + std::pow(x[i], 2.0f);
  return s;
}

struct Model {
  std::vector<double> w;
  double predict(const double *x) const {
    double s = 0;
    for (size_t i = 0; i < w.size(); i++) s += w[i] * std::tanh(x[i]);
    return s;
  }
};
// method called through a free function taking the object by const reference
double loss(const Model &m, const double *x) { double p = m.predict(x) - 1.0; return p * p; }

typedef double (*fn)(const double *, int);
static void check(const char *name, fn f, const double *got, const double *x, int len, int n) {
  std::vector<double> xp(x, x + len), xm(x, x + len);
  for (int i = 0; i < len; i++) {
    double h = hc_h(x[i]);
    xp[i] = x[i] + h; xm[i] = x[i] - h;
    char buf[64];
    snprintf(buf, sizeof buf, "%s d[%d]", name, i);
    hc_near(buf, got[i], (f(xp.data(), n) - f(xm.data(), n)) / (2 * h), 1e-6);
    xp[i] = xm[i] = x[i];
  }
}

int main() {
  const int P = 4;
  double pos[3 * P], dpos[3 * P] = {0};
  for (int i = 0; i < 3 * P; i++) pos[i] = std::sin(0.7 * i) + 0.1 * i;
  __enzyme_autodiff((void *)springs, enzyme_dup, pos, dpos, enzyme_const, P);
  check("springs", springs, dpos, pos, 3 * P, P);

  double x[6] = {0.3, -0.2, 0.7, 0.4, -0.6, 0.9}, dx[6] = {0};
  __enzyme_autodiff((void *)templ, enzyme_dup, x, dx, enzyme_const, 6);
  check("templ", templ, dx, x, 6, 6);

  float xf[4] = {0.1f, 0.4f, -0.3f, 0.8f}, dxf[4] = {0};
  __enzyme_autodiff_f((void *)flt, enzyme_dup, xf, dxf, enzyme_const, 4);
  for (int i = 0; i < 4; i++) {
    float t = xf[i];
    double want = std::cos(t) * std::exp(t) + std::sin(t) * std::exp(t) + t / std::sqrt(1 + t * t) + 2 * t;
    hc_near("float overloads", dxf[i], want, 1e-5);
  }

  Model m{{0.5, -1.0, 2.0}}, dm{{0, 0, 0}};
  double in[3] = {0.2, 0.4, -0.1}, din[3] = {0};
  __enzyme_autodiff((void *)loss, enzyme_dup, &m, &dm, enzyme_dup, in, din);
  double p = m.predict(in) - 1.0;
  for (int i = 0; i < 3; i++) {
    hc_near("dw", dm.w[i], 2 * p * std::tanh(in[i]), 1e-12);
    double t = std::tanh(in[i]);
    hc_near("din", din[i], 2 * p * m.w[i] * (1 - t * t), 1e-12);
  }
  return hc_done();
}
