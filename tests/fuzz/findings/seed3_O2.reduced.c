#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
struct S { double u; double v; int k; };
__attribute__((noinline)) void h0_u64copy(void *dst, const void *src, int n) {
  uint64_t *d = dst; const uint64_t *s = src;
  for (int i = 0; i < n; i++) d[i] = s[i];
}
__attribute__((noinline)) double f(const double *x) {
  double a[6];
  double *b = malloc(6 * sizeof(double));
  double s = tanh((0.5 + exp(0.5 * tanh(x[0])))), t = sin(cos((exp(0.5 * tanh(x[2])) * tanh(x[3]))));
  struct S st = { x[1] * 0.5, sin(exp(0.5 * tanh((x[3] / (1.5 + (sqrt(1.0 + (x[3]) * (x[3]))) * (sqrt(1.0 + (x[3]) * (x[3])))))))), 2 };
  for (int i = 0; i < 6; i++) { a[i] = (x[i % 4] * x[i % 4]) + 0.1 * i; b[i] = sin(exp(0.5 * tanh((x[(i + 2) % 4] - tanh(a[i]))))); }
  h0_u64copy(b + 0, a + 0, 6);
  static const double wa[6] = {0.982, 0.343, -0.674, 0.721, 0.929, 0.809}, wb[6] = {0.138, 0.428, -0.578, 0.663, 0.147, -0.430};
  double out = s + 0.5 * t + 0.25 * st.u - 0.125 * st.v;
  for (int i = 0; i < 6; i++) out += wa[i] * a[i] + wb[i] * b[i];
  return out;
}
int main(void) {
  double x[4] = {-0.7858, 0.6371, 0.8817, -0.7407};
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
