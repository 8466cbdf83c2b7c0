// Split mode on C++: a layer class whose forward is augmented and reversed later,
// std::vector members, a templated activation, operator overloads on a small Vec3.
#include "hcheck.h"
#include <cmath>
#include <cstring>
#include <vector>
extern "C" {
extern int enzyme_dup, enzyme_const, enzyme_dupnoneed;
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);
}
template <typename T> T softplus(T v) { return std::log1p(std::exp(v)); }
struct Layer {
  std::vector<double> w, b;
  int in, out;
  Layer(int in, int out) : w(in * out), b(out), in(in), out(out) {}
  void forward(const double *x, double *y) const {
    for (int i = 0; i < out; i++) {
      double s = b[i];
      for (int j = 0; j < in; j++) s += w[i * in + j] * x[j];
      y[i] = softplus(s);
    }
  }
};
static void layer_forward(const Layer *l, const double *x, double *y) { l->forward(x, y); }
struct Vec3 { double x, y, z; Vec3 operator-(const Vec3 &o) const { return {x - o.x, y - o.y, z - o.z}; } double norm2() const { return x * x + y * y + z * z; } };
static double pair_energy(const Vec3 *p, int n) {
  double e = 0;
  for (int i = 0; i < n; i++) for (int j = i + 1; j < n; j++) e += 1.0 / (0.5 + (p[i] - p[j]).norm2());
  return e;
}
int main() {
  const int I = 3, O = 2;
  Layer l(I, O), dl(I, O);
  for (int k = 0; k < I * O; k++) l.w[k] = 0.3 * std::sin(k + 1.0);
  for (int i = 0; i < O; i++) l.b[i] = 0.1 * i;
  double x[I] = {0.5, -0.2, 0.9}, dx[I] = {0}, y[O], dy[O] = {0};
  void *t = __enzyme_augmentfwd((void *)layer_forward, enzyme_dup, &l, &dl, enzyme_dup, x, dx, enzyme_dup, y, dy);
  double seed[O] = {1.0, -2.0};
  std::memcpy(dy, seed, sizeof dy);
  __enzyme_reverse((void *)layer_forward, enzyme_dup, &l, &dl, enzyme_dup, x, dx, enzyme_dup, y, dy, t);
  for (int i = 0; i < O; i++) {
    double s = l.b[i];
    for (int j = 0; j < I; j++) s += l.w[i * I + j] * x[j];
    double sig = 1.0 / (1.0 + std::exp(-s));
    hc_near("primal", y[i], softplus(s), 1e-14);
    hc_near("db", dl.b[i], seed[i] * sig, 1e-12);
    for (int j = 0; j < I; j++) hc_near("dw", dl.w[i * I + j], seed[i] * sig * x[j], 1e-12);
  }
  for (int j = 0; j < I; j++) {
    double want = 0;
    for (int i = 0; i < O; i++) {
      double s = l.b[i];
      for (int k = 0; k < I; k++) s += l.w[i * I + k] * x[k];
      want += seed[i] / (1.0 + std::exp(-s)) * l.w[i * I + j];
    }
    hc_near("dx", dx[j], want, 1e-12);
  }
  Vec3 p[3] = {{0, 0, 0}, {1, 0.5, 0}, {0.2, 1, 0.3}}, dp[3] = {};
  void *t2 = __enzyme_augmentfwd((void *)pair_energy, enzyme_dup, p, dp, enzyme_const, 3);
  __enzyme_reverse((void *)pair_energy, enzyme_dup, p, dp, enzyme_const, 3, 1.0, t2);
  double *pc = &p[0].x, *dpc = &dp[0].x;
  for (int k = 0; k < 9; k++) {
    double s = pc[k], h = hc_h(s);
    pc[k] = s + h; double fp = pair_energy(p, 3); pc[k] = s - h; double fm = pair_energy(p, 3); pc[k] = s;
    hc_near("dp", dpc[k], (fp - fm) / (2 * h), 1e-6);
  }
  return hc_done();
}
