#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <emmintrin.h>
typedef double v2d __attribute__((vector_size(16)));
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);
struct S { double u; double v; int k; };
struct V { double *p; int n; double w; };
struct DL { double d; long k; };
struct SP { double *p; long n; };
struct PP { double *p; double *q; };
struct T3 { double x, y, z; };

__attribute__((noinline)) double h0_rec(double v, double w, int d) {
  if (d <= 0) return (w * cos(sqrt(1.0 + (v) * (v))));
  return tanh(pow(1.25 + ((0.75 * 0.75)) * ((0.75 * 0.75)), 0.5 + 0.25 * tanh(log(1.0 + (v) * (v))))) + 0.5 * h0_rec(tanh(sqrt(1.0 + (((v / (1.5 + (w) * (w))) * w)) * (((v / (1.5 + (w) * (w))) * w)))), w, d - 1);
}

__attribute__((noinline)) double f(const double *x) {
  double a[6];
  double *b = malloc(6 * sizeof(double));
  double s = tanh(sqrt(1.0 + (x[1]) * (x[1]))), t = sin(pow(1.25 + (pow(1.25 + (exp(0.5 * tanh(x[3]))) * (exp(0.5 * tanh(x[3]))), 0.5 + 0.25 * tanh((x[3] * x[3])))) * (pow(1.25 + (exp(0.5 * tanh(x[3]))) * (exp(0.5 * tanh(x[3]))), 0.5 + 0.25 * tanh((x[3] * x[3])))), 0.5 + 0.25 * tanh(1.25)));
  struct S st = { x[1] * 0.5, tanh(exp(0.5 * tanh(x[3]))), 3 };
  for (int i = 0; i < 6; i++) { a[i] = (x[i % 4] - (pow(1.25 + (x[i % 4]) * (x[i % 4]), 0.5 + 0.25 * tanh(x[(i + 1) % 4])) - x[(i + 1) % 4])) + 0.1 * i; b[i] = tanh((tanh(tanh(1.25)) / (1.5 + ((log(1.0 + (x[(i + 2) % 4]) * (x[(i + 2) % 4])) - (a[i] * a[i]))) * ((log(1.0 + (x[(i + 2) % 4]) * (x[(i + 2) % 4])) - (a[i] * a[i])))))); }
  st.u = sin((pow(1.25 + ((t - a[2])) * ((t - a[2])), 0.5 + 0.25 * tanh((b[1] * t))) + s)); st.v = st.v * 0.5 + sin(cos(s));
  { double *p12 = malloc(2 * sizeof(double)); p12[0] = tanh(sin(sin((s + x[0 % 4])))); p12[1] = sin(log(1.0 + (((s + a[1]) - s)) * (((s + a[1]) - s))));
    p12 = realloc(p12, 6 * sizeof(double));
    for (int k13 = 2; k13 < 6; k13++) p12[k13] = 0.5 * p12[k13 - 1] + 0.5 * tanh(exp(0.5 * tanh(pow(1.25 + ((s - 1.25)) * ((s - 1.25)), 0.5 + 0.25 * tanh(s)))));
    for (int k13 = 0; k13 < 6; k13++) s = s + 0.1 * p12[k13];
    free(p12); }
  s = s + 0.25 * st.u * st.v;
  { uint64_t w1; memcpy(&w1, &a[3], sizeof w1); memcpy(&b[5], &w1, sizeof w1); }
  if ((cos(s) + cos(exp(0.5 * tanh(t)))) > -0.2) {
    { int k2 = 0; while (k2 < 6 && s < 1.5) { s = s + 0.3 + 0.2 * tanh((tanh((s - a[k2])) / (1.5 + (s) * (s)))); k2++; } }
  } else {
    for (int i3 = 0; i3 < 5; i3++) a[i3] = tanh((a[i3 + 1] * (sqrt(1.0 + (s) * (s)) * sqrt(1.0 + (s) * (s)))));
  }
  { uint64_t w8; memcpy(&w8, &a[3], 8); w8 &= 0x7fffffffffffffffull;
    memcpy(&b[0], &w8, 8); }
  for (int i4 = 0; i4 < 6; i4++)
    for (int j5 = 0; j5 <= i4; j5++) t = 0.75 * t + 0.25 * tanh(((pow(1.25 + (s) * (s), 0.5 + 0.25 * tanh(1.25)) * (a[j5] * x[j5 % 4])) * (pow(1.25 + (s) * (s), 0.5 + 0.25 * tanh(1.25)) * (a[j5] * x[j5 % 4]))));
  { static const int q7i[6] = {4, 0, 2, 3, 2, 1};
    for (int p = 0; p < 6; p++) b[q7i[p]] += 0.25 * tanh(a[p] * s); }
  { uint64_t w6; memcpy(&w6, &b[0], sizeof w6); memcpy(&a[1], &w6, sizeof w6); }
  static const double wa[6] = {-0.125, -0.710, -0.964, 0.888, 0.301, 0.024}, wb[6] = {-0.564, 0.863, 0.197, 0.567, -0.393, -0.108};
  double out = s + 0.5 * t + 0.25 * st.u - 0.125 * st.v;
  for (int i = 0; i < 6; i++) out += wa[i] * a[i] + wb[i] * b[i];
  free(b);
  return out;
}

int main(void) {
  double x[4] = {0.8702, -0.3416, 0.8207, 0.3423};
  double g[4] = {0};
  printf("VAL %.17g\n", f(x));
  __enzyme_autodiff((void *)f, enzyme_dup, x, g);
  for (int i = 0; i < 4; i++) printf("REV %d %.17g\n", i, g[i]);
  for (int i = 0; i < 4; i++) {
    double e[4] = {0};
    e[i] = 1.0;
    printf("FWD %d %.17g\n", i, __enzyme_fwddiff((void *)f, enzyme_dup, x, e));
  }
  double gs[4] = {0};
  void *tape = __enzyme_augmentfwd((void *)f, enzyme_dup, x, gs);
  __enzyme_reverse((void *)f, enzyme_dup, x, gs, 1.0, tape);
  for (int i = 0; i < 4; i++) printf("SPL %d %.17g\n", i, gs[i]);
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
