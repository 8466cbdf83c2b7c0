#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
struct S { double u; double v; int k; };
static double h1_array(double *p, int n, double v) {
  double acc = 0.0;
  return acc;
}
static void h2_u64copy(void *dst, const void *src, int n) {
  uint64_t *d = dst; const uint64_t *s = src;
  for (int i = 0; i < n; i++) d[i] = s[i];
}
__attribute__((noinline)) double f(const double *x) {
  double a[6];
  double *b = malloc(6 * sizeof(double));
  double s = tanh(((sqrt(1.0 + (x[0]) * (x[0])) * (0.5 * x[1])) / (1.5 + (x[1]) * (x[1])))), t = tanh((log(1.0 + (sin(x[2])) * (sin(x[2]))) * ((x[2] * x[2]) * sqrt(1.0 + (x[2]) * (x[2])))));
  struct S st = { x[1] * 0.5, sin(exp(0.5 * tanh(sin((x[0] * x[0]))))), 2 };
  for (int i = 0; i < 6; i++) { a[i] = exp(0.5 * tanh((x[i % 4] - 0.75))) + 0.1 * i; b[i] = sin((sin(exp(0.5 * tanh(a[i]))) * sin(exp(0.5 * tanh(a[i]))))); }
  if (tanh(cos(exp(0.5 * tanh(s)))) > -0.2) {
    h2_u64copy(b + 0, a + 1, 5);
    { double *p3 = b + 2;
      t = t + 0.5 * p3[-1]; }
  }
  double out = s + 0.5 * t + 0.25 * st.u - 0.125 * st.v;
  free(b);
  return out;
}
int main(void) {
  double x[4] = {0.8926, -0.6198, 0.8939, 0.2249};
  double g[4] = {0};
  printf("VAL %.17g\n", f(x));
  __enzyme_autodiff((void *)f, enzyme_dup, x, g);
  for (int i = 0; i < 4; i++) printf("REV %d %.17g\n", i, g[i]);
  for (int i = 0; i < 4; i++) {
    double e[4] = {0};
    e[i] = 1.0;
    printf("FWD %d %.17g\n", i, __enzyme_fwddiff((void *)f, enzyme_dup, x, e));
  }
  static const double steps[3] = {1e-4, 1e-5, 1e-6};
  for (int k = 0; k < 3; k++)
    for (int i = 0; i < 4; i++) {
      double xp[4], xm[4];
      memcpy(xp, x, sizeof xp); memcpy(xm, x, sizeof xm);
      xp[i] += steps[k]; xm[i] -= steps[k];
      printf("FD %g %d %.17g\n", steps[k], i, (f(xp) - f(xm)) / (xp[i] - xm[i]));
    }
  return 0;
}
