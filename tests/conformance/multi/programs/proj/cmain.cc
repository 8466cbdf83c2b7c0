// A C++ main over the C model library (extern "C" header), linked with enzyme-build c++.
#include "hcheck.h"
extern "C" {
#include "model.h"
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
}
int main() {
  double w[4] = {0.3, 0.7, -1.1, 0.4}, x[4] = {1.5, -0.5, 0.25, 2.0}, dw[4] = {0}, dx[4] = {0};
  __enzyme_autodiff((void *)loss, enzyme_dup, w, dw, enzyme_dup, x, dx, enzyme_const, 4);
  for (int i = 0; i < 4; i++) hc_near("dx", dx[i], 3.0 * w[i], 1e-12);
  hc_near("dw0", dw[0], 6.0 * x[0] + 7.0, 1e-9);
  return hc_done();
}
