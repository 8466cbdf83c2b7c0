/* Doubles serialized into a byte buffer with memcpy and read back (message packing). */
#include "hcheck.h"
#include <string.h>
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double f(const double *x, int n) {
  unsigned char buf[128];
  size_t off = 0;
  for (int i = 0; i < n; i++) { double v = x[i] * x[i]; memcpy(buf + off, &v, sizeof v); off += sizeof v; }
  double s = 0;
  for (int i = 0; i < n; i++) { double v; memcpy(&v, buf + i * sizeof v, sizeof v); s += v * (i + 1); }
  return s;
}
int main(void) {
  double x[4] = {0.5, -1.5, 1.0, 0.25}, d[4] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, d, enzyme_const, 4);
  for (int i = 0; i < 4; i++) hc_near("d", d[i], 2 * x[i] * (i + 1), 1e-12);
  return hc_done();
}
