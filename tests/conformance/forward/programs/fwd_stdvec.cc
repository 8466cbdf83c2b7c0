// Forward mode through std::vector used directly and behind a class's methods (the shapes
// -O0 leaves as real calls to the vector's constructor, operator[] and destructor).
#include <vector>
#include "hcheck.h"
extern "C" { extern int enzyme_dup, enzyme_const; double __enzyme_fwddiff(void *, ...); }

double direct(const double *w, int n) {
  std::vector<double> v(n);
  for (int i = 0; i < n; i++) v[i] = w[i];
  return v[0] * v[1];
}

struct Model {
  std::vector<double> w;
  explicit Model(int n) : w(n) {}
  void set(int i, double v) { w[i] = v; }
  double get(int i) const { return w[i]; }
};
double methods(const double *x, int n) {
  Model m(n);
  for (int i = 0; i < n; i++) m.set(i, x[i]);
  return m.get(0) * m.get(1);
}

int main() {
  double w[2] = {3.0, 5.0}, dw[2] = {1.0, 0.0}, dw1[2] = {0.0, 1.0};
  hc_near("direct", __enzyme_fwddiff((void *)direct, enzyme_dup, w, dw, enzyme_const, 2), 5.0, 1e-15);
  hc_near("direct 1", __enzyme_fwddiff((void *)direct, enzyme_dup, w, dw1, enzyme_const, 2), 3.0, 1e-15);
  hc_near("methods", __enzyme_fwddiff((void *)methods, enzyme_dup, w, dw, enzyme_const, 2), 5.0, 1e-15);
  hc_near("methods 1", __enzyme_fwddiff((void *)methods, enzyme_dup, w, dw1, enzyme_const, 2), 3.0, 1e-15);
  return hc_done();
}
