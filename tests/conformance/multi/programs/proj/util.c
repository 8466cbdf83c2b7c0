/* Helpers whose derivatives come from registrations in model.c: a fast exp with its own
 * gradient rule, an inactive noise source and a log1p look-alike. */
#include <math.h>
#include "model.h"

double fastexp(double x) { double t = 1.0 + x / 256.0; for (int i = 0; i < 8; i++) t *= t; return t; }
double noise(double x) { return sin(1e4 * x); }
double my_log1p(double x) {
  double r = 0, t = 1.0 + x;
  while (t > 1.000001) { t = sqrt(t); r += 1; }
  return ldexp(t - 1.0, (int)r);
}
