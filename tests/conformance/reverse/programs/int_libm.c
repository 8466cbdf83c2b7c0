/* libm functions returning integers (lround, lrint, llround, llrint, ilogb) have zero
 * derivative: a result used as an integer factor must not make the build fail. */
#include "hcheck.h"
double __enzyme_autodiff(void *, ...);
double f(double x) { return x * lround(x * 4) + x * lrint(x * 4) + x * llround(x) + x * llrint(x * 2) + ilogb(x) * x; }
int main(void) {
  double x = 0.83; /* lround(3.32)=3, lrint(3.32)=3, llround(.83)=1, llrint(1.66)=2, ilogb(.83)=-1 */
  double g = __enzyme_autodiff((void *)f, x);
  hc_near("d", g, 3 + 3 + 1 + 2 - 1, 1e-12);
  return hc_done();
}
