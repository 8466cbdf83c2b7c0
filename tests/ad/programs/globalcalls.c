/* Callees that read or write active globals without taking them as arguments (the
 * optimizer specializes `sum(G, n)` into `sum(n)`), and memcpy into a global array. */
#include "adcheck.h"
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
double G[4];
double H[4];

static void fill(double *a, const double *x, int n) { for (int i = 0; i < n; i++) a[i] = x[i] * x[i]; }
static double sum(const double *b, int n) { double s = 0; for (int i = 0; i < n; i++) s += b[i] * (i + 1); return s; }
__attribute__((noinline)) static void scale_h(int n) { for (int i = 0; i < n; i++) H[i] *= 3.0; }
__attribute__((noinline)) static double read_h(int n) { double s = 0; for (int i = 0; i < n; i++) s += H[i] * H[i]; return s; }

double via_global(const double *x, int n) {
  double a[4];
  fill(a, x, n);
  memcpy(G, a, sizeof(double) * n);
  return sum(G, n);
}
double hidden_globals(const double *x, int n) {
  for (int i = 0; i < n; i++) H[i] = x[i];
  scale_h(n);
  return read_h(n);   /* sum 9 x_i^2 */
}

int main(void) {
  double x[4] = {0.5, -1.0, 2.0, 0.25}, d[4] = {0};
  __enzyme_autodiff((void *)via_global, enzyme_dup, x, d, enzyme_const, 4);
  for (int i = 0; i < 4; i++) ac_near("memcpy into a global", d[i], 2 * x[i] * (i + 1), 1e-12);
  memset(d, 0, sizeof d);
  __enzyme_autodiff((void *)hidden_globals, enzyme_dup, x, d, enzyme_const, 4);
  for (int i = 0; i < 4; i++) ac_near("callees on globals", d[i], 18 * x[i], 1e-12);
  for (int i = 0; i < 4; i++) {
    double t[4] = {0};
    t[i] = 1;
    ac_near("callees on globals, forward", __enzyme_fwddiff((void *)hidden_globals, enzyme_dup, x, t, enzyme_const, 4),
            18 * x[i], 1e-12);
  }
  return ac_done();
}
