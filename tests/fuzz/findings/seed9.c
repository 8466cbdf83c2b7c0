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

__attribute__((noinline)) double h1_array(double *p, int n, double v) {
  double acc = 0.0;
  for (int i = 0; i < n; i++) { p[i] = tanh(cos(tanh(p[i]))); acc += p[i] * v; }
  return acc;
}

__attribute__((noinline)) double f(const double *x) {
  double a[6];
  double *b = malloc(6 * sizeof(double));
  double s = sin(sin(x[0])), t = tanh(((x[3] / (1.5 + ((x[3] * x[3])) * ((x[3] * x[3])))) / (1.5 + (sin(tanh(x[3]))) * (sin(tanh(x[3]))))));
  struct S st = { x[1] * 0.5, tanh(sin(((x[0] - x[0]) * x[3]))), 0 };
  for (int i = 0; i < 6; i++) { a[i] = exp(0.5 * tanh(sqrt(1.0 + (pow(1.25 + (x[(i + 1) % 4]) * (x[(i + 1) % 4]), 0.5 + 0.25 * tanh(1.25))) * (pow(1.25 + (x[(i + 1) % 4]) * (x[(i + 1) % 4]), 0.5 + 0.25 * tanh(1.25)))))) + 0.1 * i; b[i] = sin((tanh(-0.3) * x[(i + 2) % 4])); }
  { double *p1 = b + 0;
    for (int i2 = 0; i2 < 2; i2++) { *p1 = tanh((t + t)); p1++; }
    t = t + 0.5 * p1[-1]; }
  { uint64_t w3; memcpy(&w3, &a[5], sizeof w3); memcpy(&b[0], &w3, sizeof w3); }
  for (int i4 = 0; i4 < 6; i4++)
    for (int j5 = 0; j5 <= i4; j5++) b[i4] = 0.75 * b[i4] + 0.25 * tanh((((b[j5] + 1.25) + (s - 1.25)) * (a[i4] * (x[j5 % 4] + a[i4]))));
  for (int i6 = 0; i6 < 6; i6++) { b[i6] = 0.5 * b[i6] + 0.5 * tanh(tanh((a[(i6 + 1) % 6] + (a[(i6 + 1) % 6] / (1.5 + (s) * (s)))))); }
  memmove(a + 0, a + 1, 5 * sizeof(double));
  for (int i7 = 0; i7 < 5; i7++) a[i7] = sin((tanh(exp(0.5 * tanh(a[i7 + 1]))) * 1.25));
  static const double wa[6] = {-0.112, -0.351, -0.822, 0.259, -0.794, 0.568}, wb[6] = {-0.949, 0.561, 0.615, -0.005, 0.419, -0.503};
  double out = s + 0.5 * t + 0.25 * st.u - 0.125 * st.v;
  for (int i = 0; i < 6; i++) out += wa[i] * a[i] + wb[i] * b[i];
  free(b);
  return out;
}

int main(void) {
  double x[4] = {0.4277, -0.1350, -0.4843, 0.8353};
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
