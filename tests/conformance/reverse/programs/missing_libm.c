/* libm functions without a derivative rule yet: fdim, scalbn, remainder (and f forms). */
#include "hcheck.h"
typedef struct { double a, b; } d2;
d2 __enzyme_autodiff(void *, ...);
double f(double x, double y) {
  return fdim(x, y) + scalbn(x, 3) * y + fdimf((float)y, 0.f) + remainder(x + 1.0, y);
}
int main(void) {
  double x = 1.3, y = 0.7; /* remainder(2.3, 0.7) = 2.3 - 3 * 0.7 */
  d2 g = __enzyme_autodiff((void *)f, x, y);
  hc_near("dx", g.a, 1.0 + 8 * y + 1.0, 1e-9);
  hc_near("dy", g.b, -1.0 + 8 * x + 1.0 - 3.0, 1e-6);
  return hc_done();
}
