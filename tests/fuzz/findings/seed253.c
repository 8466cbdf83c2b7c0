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
  for (int i = 0; i < n; i++) { uint64_t w; memcpy(&w, (const char *)src + 8 * i, 8); memcpy((char *)dst + 8 * i, &w, 8); }
}

static double h1_array(double *p, int n, double v) {
  double acc = 0.0;
  for (int i = 0; i < n; i++) { p[i] = tanh(((p[i] - v) - sin((v - p[i])))); acc += p[i] * 0.25; }
  return acc;
}

static void h2_u64copy(void *dst, const void *src, int n) {
  for (int i = 0; i < n; i++) { uint64_t w; memcpy(&w, (const char *)src + 8 * i, 8); memcpy((char *)dst + 8 * i, &w, 8); }
}

__attribute__((noinline)) double f(const double *x) {
  double a[6];
  double *b = malloc(6 * sizeof(double));
  double s = tanh(((sqrt(1.0 + (x[0]) * (x[0])) * (0.5 * x[1])) / (1.5 + (x[1]) * (x[1])))), t = tanh((log(1.0 + (sin(x[2])) * (sin(x[2]))) * ((x[2] * x[2]) * sqrt(1.0 + (x[2]) * (x[2])))));
  struct S st = { x[1] * 0.5, sin(exp(0.5 * tanh(sin((x[0] * x[0]))))), 2 };
  for (int i = 0; i < 6; i++) { a[i] = exp(0.5 * tanh((x[i % 4] - 0.75))) + 0.1 * i; b[i] = sin((sin(exp(0.5 * tanh(a[i]))) * sin(exp(0.5 * tanh(a[i]))))); }
  { int m1 = 1 + (int)(2.0 * (1.0 + tanh((exp(0.5 * tanh(tanh(-0.3))) + tanh(b[4])))));
    for (int i2 = 0; i2 < m1; i2++) b[i2] = 0.5 * b[i2] + 0.5 * sin(cos((b[i2] * a[i2]))); }
  if (tanh(cos(exp(0.5 * tanh(s)))) > -0.2) {
    h2_u64copy(b + 0, a + 1, 5);
  } else {
    { double *p3 = b + 2;
      for (int i4 = 0; i4 < 1; i4++) { *p3 = sin((exp(0.5 * tanh(sin(*p3))) - log(1.0 + ((0.75 / (1.5 + (t) * (t)))) * ((0.75 / (1.5 + (t) * (t))))))); p3++; }
      t = t + 0.5 * p3[-1]; }
  }
  for (int i5 = 0; i5 < 5; i5++) a[i5] = tanh(sin(cos(tanh(a[i5]))));
  { int k6 = 0; while (k6 < 6 && s < 2.5) { s = s + 0.3 + 0.2 * tanh((exp(0.5 * tanh((1.25 - 0.5))) + (pow(1.25 + (s) * (s), 0.5 + 0.25 * tanh(b[k6])) * (s + b[k6])))); k6++; } }
  static const double wa[6] = {-0.329, 0.623, 0.596, 0.780, -0.072, 0.446}, wb[6] = {0.103, -0.572, -0.603, 0.660, 0.698, -0.875};
  double out = s + 0.5 * t + 0.25 * st.u - 0.125 * st.v;
  for (int i = 0; i < 6; i++) out += wa[i] * a[i] + wb[i] * b[i];
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
