#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
struct S { double u; double v; int k; };
static void h0_u64copy(void *dst, const void *src, int n) {
}
__attribute__((noinline)) double f(const double *x) {
  double a[6];
  double *b = malloc(6 * sizeof(double));
  double s = sin(sin(cos(cos(0.5)))), t = tanh(exp(0.5 * tanh((pow(1.25 + (x[3]) * (x[3]), 0.5 + 0.25 * tanh(0.75)) - x[3]))));
  struct S st = { x[1] * 0.5, tanh(log(1.0 + (log(1.0 + ((x[3] + x[0])) * ((x[3] + x[0])))) * (log(1.0 + ((x[3] + x[0])) * ((x[3] + x[0])))))), 1 };
  for (int i = 0; i < 6; i++) { a[i] = sin((exp(0.5 * tanh(0.5)) * x[(i + 1) % 4])) + 0.1 * i; b[i] = sin(((x[(i + 2) % 4] - a[i]) * tanh(sqrt(1.0 + (a[i]) * (a[i]))))); }
  if (sqrt(1.0 + (sin(s)) * (sin(s))) > -0.2) {
  }
  memmove(a + 1, a + 2, 4 * sizeof(double));
  { double *p4 = b + 1;
    t = t + 0.5 * p4[-1]; }
  for (int i6 = 0; i6 < 6; i6++)
    for (int j7 = 0; j7 <= i6; j7++) s = 0.75 * s + 0.25 * tanh(((a[j7] + a[j7]) * a[j7]));
  double out = s + 0.5 * t + 0.25 * st.u - 0.125 * st.v;
  return out;
}
int main(void) {
  double x[4] = {-0.7142, -0.5388, 0.3460, -0.6468};
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
