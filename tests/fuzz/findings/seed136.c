#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
struct S { double u; double v; int k; };

__attribute__((noinline)) double h0_rec(double v, double w, int d) {
  if (d <= 0) return exp(0.5 * tanh(((w * 0.5) * (w + w))));
  return sin((((v / (1.5 + (v) * (v))) - w) / (1.5 + ((v * (w / (1.5 + (w) * (w))))) * ((v * (w / (1.5 + (w) * (w)))))))) + 0.5 * h0_rec(tanh((sqrt(1.0 + (sqrt(1.0 + (v) * (v))) * (sqrt(1.0 + (v) * (v)))) / (1.5 + (v) * (v)))), w, d - 1);
}

__attribute__((noinline)) void h1_u64copy(void *dst, const void *src, int n) {
  uint64_t *d = dst; const uint64_t *s = src;
  for (int i = 0; i < n; i++) d[i] = s[i];
}

__attribute__((noinline)) double h2_rec(double v, double w, int d) {
  if (d <= 0) return (w - w);
  return tanh(exp(0.5 * tanh(sin(w)))) + 0.5 * h2_rec(sin(((log(1.0 + (w) * (w)) * sqrt(1.0 + (w) * (w))) * (log(1.0 + (w) * (w)) + (0.5 - w)))), w, d - 1);
}

__attribute__((noinline)) double f(const double *x) {
  double a[6];
  double *b = malloc(6 * sizeof(double));
  double s = tanh(exp(0.5 * tanh(tanh(exp(0.5 * tanh(x[0])))))), t = tanh(log(1.0 + ((pow(1.25 + (x[3]) * (x[3]), 0.5 + 0.25 * tanh(x[2])) / (1.5 + (0.75) * (0.75)))) * ((pow(1.25 + (x[3]) * (x[3]), 0.5 + 0.25 * tanh(x[2])) / (1.5 + (0.75) * (0.75))))));
  struct S st = { x[1] * 0.5, sin(cos(x[3])), 3 };
  for (int i = 0; i < 6; i++) { a[i] = sqrt(1.0 + (log(1.0 + ((x[i % 4] + x[i % 4])) * ((x[i % 4] + x[i % 4])))) * (log(1.0 + ((x[i % 4] + x[i % 4])) * ((x[i % 4] + x[i % 4]))))) + 0.1 * i; b[i] = tanh(cos((log(1.0 + (x[(i + 2) % 4]) * (x[(i + 2) % 4])) * x[(i + 2) % 4]))); }
  { double *p1 = b + 1;
    for (int i2 = 0; i2 < 5; i2++) { *p1 = sin((((s - s) * sqrt(1.0 + (-0.3) * (-0.3))) - *p1)); p1++; }
    t = t + 0.5 * p1[-1]; }
  memcpy(a + 0, b + 0, 6 * sizeof(double));
  memcpy(b + 0, a + 2, 4 * sizeof(double));
  for (int i3 = 0; i3 < 5; i3++) b[i3] = sin((b[i3 + 1] / (1.5 + (tanh((b[i3] * s))) * (tanh((b[i3] * s))))));
  static const double wa[6] = {0.257, -0.519, -0.323, 0.980, -0.093, -0.177}, wb[6] = {-0.113, 0.541, -0.566, -0.817, 0.890, 0.716};
  double out = s + 0.5 * t + 0.25 * st.u - 0.125 * st.v;
  for (int i = 0; i < 6; i++) out += wa[i] * a[i] + wb[i] * b[i];
  free(b);
  return out;
}

int main(void) {
  double x[4] = {-0.1078, -0.8172, -0.1406, -0.5089};
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
