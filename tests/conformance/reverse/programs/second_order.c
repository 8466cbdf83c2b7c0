/* Second order: the differentiated function computes a gradient itself (forces from an
 * energy), reverse over reverse and forward over reverse. */
#include "hcheck.h"
extern int enzyme_dup, enzyme_const, enzyme_dupnoneed;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
double energy(double x, double y) { return x * x * y + sin(x * y); }
typedef struct { double a, b; } d2;
d2 __enzyme_autodiff_d2(void *, ...);
/* loss = |grad E|^2 / 2 */
double force_loss(double x, double y) {
  d2 g = __enzyme_autodiff_d2((void *)energy, x, y);
  return 0.5 * (g.a * g.a + g.b * g.b);
}
int main(void) {
  double x = 0.7, y = -0.4, h = 1e-5;
  d2 r = __enzyme_autodiff_d2((void *)force_loss, x, y);
  hc_near("d/dx", r.a, (force_loss(x + h, y) - force_loss(x - h, y)) / (2 * h), 1e-6);
  hc_near("d/dy", r.b, (force_loss(x, y + h) - force_loss(x, y - h)) / (2 * h), 1e-6);
  double t = __enzyme_fwddiff((void *)force_loss, x, 1.0, y, 0.0);
  hc_near("fwd d/dx", t, r.a, 1e-9);
  return hc_done();
}
