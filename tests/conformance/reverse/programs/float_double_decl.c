/* One declaration for everything: __enzyme_autodiff declared returning double, used on a
 * float function with a float argument (promoted to double through the ellipsis). */
#include "hcheck.h"
double __enzyme_autodiff(void *, ...);
float f(float x) { return x * x * x; }
float g(float x, int k) { return sinf(x) * k; }
int main(void) {
  double d = __enzyme_autodiff((void *)f, 1.5f);
  hc_near("float fn, double decl", d, 3 * 1.5 * 1.5, 1e-6);
  double d2 = __enzyme_autodiff((void *)g, 0.5f, 3);
  hc_near("float fn + int", d2, 3 * cos(0.5), 1e-6);
  return hc_done();
}
