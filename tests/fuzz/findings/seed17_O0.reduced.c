#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
struct S { double u; double v; int k; };
static double h0_rec(double v, double w, int d) {
  return tanh((w + w)) + 0.5 * h0_rec(sin(((v + v) * 0.5)), w, d - 1);
}
__attribute__((noinline)) void h1_struct(struct S *s, double v) {
}
__attribute__((noinline)) double h2_array(double *p, int n, double v) {
  double acc = 0.0;
  return acc;
}
__attribute__((noinline)) double f(const double *x) {
  double a[6];
  double *b = malloc(6 * sizeof(double));
  double s = tanh((x[0] * x[0])), t = sin(sqrt(1.0 + (((x[3] + x[3]) * (x[2] + x[2]))) * (((x[3] + x[3]) * (x[2] + x[2])))));
  struct S st = { x[1] * 0.5, sin(exp(0.5 * tanh(sqrt(1.0 + (cos(0.5)) * (cos(0.5)))))), 2 };
  for (int i = 0; i < 6; i++) { a[i] = log(1.0 + (x[i % 4]) * (x[i % 4])) + 0.1 * i; b[i] = sin(cos((0.5 * a[i]))); }
  { uint64_t w1; memcpy(&w1, &a[5], sizeof w1); memcpy(&a[2], &w1, sizeof w1); }
  t = sin(log(1.0 + (tanh((a[2] * s))) * (tanh((a[2] * s)))));
  static const double wa[6] = {-0.656, 0.945, -0.578, -0.132, -0.102, -0.813}, wb[6] = {-0.789, -0.979, 0.884, 0.797, 0.107, -0.642};
  double out = s + 0.5 * t + 0.25 * st.u - 0.125 * st.v;
  for (int i = 0; i < 6; i++) out += wa[i] * a[i] + wb[i] * b[i];
  free(b);
  return out;
}
int main(void) {
  double x[4] = {-0.0655, 0.6402, -0.6531, 0.0889};
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
