/* Call-site argument conversions through the variadic ABI: an int literal for a size_t
 * or long parameter, a double literal for a float parameter, char/short/unsigned
 * parameters, a NULL const pointer. */
#include "hcheck.h"
#include <stddef.h>
extern int enzyme_dup, enzyme_const, enzyme_out;
double __enzyme_autodiff(void *, ...);
double f_sizet(const double *x, size_t n) { double s = 0; for (size_t i = 0; i < n; i++) s += x[i] * x[i]; return s; }
double f_long(const double *x, long n, unsigned char c, short k) { double s = 0; for (long i = 0; i < n; i++) s += x[i] * (c + k); return s; }
double f_float(float a, double b) { return a * b * b; }
double f_null(const double *x, const double *w, int n) { double s = 0; for (int i = 0; i < n; i++) s += x[i] * x[i] * (w ? w[i] : 1.0); return s; }
int main(void) {
  double x[3] = {1, 2, 3}, dx[3] = {0};
  __enzyme_autodiff((void *)f_sizet, enzyme_dup, x, dx, enzyme_const, 3);
  for (int i = 0; i < 3; i++) hc_near("size_t n", dx[i], 2 * x[i], 1e-12);
  double dx2[3] = {0};
  __enzyme_autodiff((void *)f_long, enzyme_dup, x, dx2, enzyme_const, 3, enzyme_const, 2, enzyme_const, 5);
  for (int i = 0; i < 3; i++) hc_near("long/char/short", dx2[i], 7, 1e-12);
  double db = __enzyme_autodiff((void *)f_float, enzyme_const, 0.5, enzyme_out, 3.0);
  hc_near("double literal for float param", db, 2 * 0.5 * 3.0, 1e-12);
  double dx3[3] = {0};
  __enzyme_autodiff((void *)f_null, enzyme_dup, x, dx3, enzyme_const, NULL, enzyme_const, 3);
  for (int i = 0; i < 3; i++) hc_near("NULL const pointer", dx3[i], 2 * x[i], 1e-12);
  return hc_done();
}
