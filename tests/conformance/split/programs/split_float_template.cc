// Split mode in float: a templated loss over std::vector<float> members, active float
// scalars returned as a struct by the reverse call, and a {tape, float} augmented return.
#include "hcheck.h"
#include <cmath>
#include <vector>
extern "C" {
extern int enzyme_dup, enzyme_const;
struct aug_f { void *tape; float primal; };
aug_f __enzyme_augmentfwd(void *, ...);
struct f2 { float a, b; };
f2 __enzyme_reverse(void *, ...);
}
template <typename T> struct Data { std::vector<T> xs, ys; };
template <typename T> T loss(const Data<T> *d, T w, T b) {
  T s = 0;
  for (size_t i = 0; i < d->xs.size(); i++) { T r = w * d->xs[i] + b - d->ys[i]; s += r * r; }
  return s / T(d->xs.size());
}
int main() {
  Data<float> d{{0.f, 1.f, 2.f, 3.f}, {1.f, 2.9f, 5.2f, 7.1f}};
  float w = 1.5f, b = 0.5f;
  aug_f a = __enzyme_augmentfwd((void *)loss<float>, enzyme_const, &d, w, b);
  hc_near("primal", a.primal, loss(&d, w, b), 1e-6);
  f2 g = __enzyme_reverse((void *)loss<float>, enzyme_const, &d, w, b, 1.0f, a.tape);
  double gw = 0, gb = 0;
  for (int i = 0; i < 4; i++) { double r = w * d.xs[i] + b - d.ys[i]; gw += 2 * r * d.xs[i] / 4; gb += 2 * r / 4; }
  hc_near("dw", g.a, gw, 1e-5);
  hc_near("db", g.b, gb, 1e-5);
  return hc_done();
}
