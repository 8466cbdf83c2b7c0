// std::vector of a small struct grown by push_back: libstdc++ relocates the elements
// with memmove inside __relocate_a_1 at -O0.
#include "hcheck.h"
#include <vector>
extern "C" {
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
}
struct P2 { double x, y; };
extern "C" double energy(const double *q, int n) {
  std::vector<P2> pts;
  for (int i = 0; i < n; i++) pts.push_back({q[2 * i], q[2 * i + 1]});
  double e = 0;
  for (const P2 &p : pts) e += p.x * p.x * p.y;
  return e;
}
int main() {
  double q[6] = {0.5, 1.5, -0.25, 2.0, 1.0, -1.0}, dq[6] = {0};
  __enzyme_autodiff((void *)energy, enzyme_dup, q, dq, enzyme_const, 3);
  for (int i = 0; i < 3; i++) {
    hc_near("dx", dq[2 * i], 2 * q[2 * i] * q[2 * i + 1], 1e-12);
    hc_near("dy", dq[2 * i + 1], q[2 * i] * q[2 * i], 1e-12);
  }
  return hc_done();
}
