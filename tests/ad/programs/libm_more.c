/* libm beyond the elementary functions: fdim, scalbn, remainder, integer-valued results
 * (lround, lrint, llround, llrint, ilogb), and out-parameters (modf, frexp), in reverse
 * and forward mode. */
#include "adcheck.h"
typedef struct { double a, b; } d2;
d2 __enzyme_autodiff2(void *, ...) __asm__("__enzyme_autodiff");
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

double piecewise(double x, double y) {
  return fdim(x, y) + scalbn(x, 3) * y + fdimf((float)y, 0.f) + remainder(x + 1.0, y);
}
double rounded(double x) {
  return x * lround(x * 4) + x * lrint(x * 4) + x * llround(x) + x * llrint(x * 2) + ilogb(x) * x
         + lroundf((float)x * 4) * x;
}
double parts(double x) {
  double ip;
  double fr = modf(x * 5, &ip);
  int e;
  double m = frexp(x * 3, &e);
  return fr * ip + fr * fr + m * e;
}

int main(void) {
  double x = 1.3, y = 0.7;   /* remainder(2.3, 0.7) = 2.3 - 3 * 0.7 */
  d2 r = __enzyme_autodiff2((void *)piecewise, x, y);
  ac_near("piecewise dx", r.a, 1.0 + 8 * y + 1.0, 1e-12);
  ac_near("piecewise dy", r.b, -1.0 + 8 * x + 1.0 - 3.0, 1e-12);
  ac_near("piecewise fwd dx", __enzyme_fwddiff((void *)piecewise, x, 1.0, y, 0.0), r.a, 1e-12);
  ac_near("piecewise fwd dy", __enzyme_fwddiff((void *)piecewise, x, 0.0, y, 1.0), r.b, 1e-12);
  double z = 0.83;   /* lround(3.32)=3, lrint(3.32)=3, llround(.83)=1, llrint(1.66)=2, ilogb(.83)=-1 */
  ac_near("rounded", __enzyme_autodiff((void *)rounded, z), 3 + 3 + 1 + 2 - 1 + 3, 1e-12);
  ac_near("rounded fwd", __enzyme_fwddiff((void *)rounded, z, 1.0), 3 + 3 + 1 + 2 - 1 + 3, 1e-12);
  double fr = z * 5 - 4;   /* modf(4.15) = 0.15 + 4; frexp(2.49) = 0.6225 * 2^2 */
  ac_near("parts", __enzyme_autodiff((void *)parts, z), 5 * 4 + 2 * fr * 5 + 0.75 * 2, 1e-9);
  ac_near("parts fwd", __enzyme_fwddiff((void *)parts, z, 1.0), 5 * 4 + 2 * fr * 5 + 0.75 * 2, 1e-9);
  return ac_done();
}
