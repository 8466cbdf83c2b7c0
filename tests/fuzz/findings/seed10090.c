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

__attribute__((noinline)) double h0_scalar(double u, double v) {
  return (((u - v) * v) * sin(log(1.0 + (0.5) * (0.5))));
}

static double h1_array(double *p, int n, double v) {
  double acc = 0.0;
  for (int i = 0; i < n; i++) { p[i] = sin((p[i] + tanh((1.25 - -0.3)))); acc += p[i] * v; }
  return acc;
}

__attribute__((noinline)) double h2_scalar(double u, double v) {
  return (tanh(exp(0.5 * tanh(u))) * tanh(exp(0.5 * tanh(u))));
}

__attribute__((noinline)) uint64_t ib_to(double v) { uint64_t w; memcpy(&w, &v, 8); return w; }

__attribute__((noinline)) double ib_from(uint64_t w) { double v; memcpy(&v, &w, 8); return v; }

__attribute__((noinline)) double f(const double *x) {
  double a[6];
  double *b = malloc(6 * sizeof(double));
  double s = sin((log(1.0 + (exp(0.5 * tanh(x[0]))) * (exp(0.5 * tanh(x[0])))) - ((x[1] * -0.3) - tanh(x[0])))), t = sin((((x[2] + x[3]) * (x[2] + x[3])) * ((x[2] + x[3]) * (x[2] + x[3]))));
  struct S st = { x[1] * 0.5, tanh((sqrt(1.0 + (x[3]) * (x[3])) / (1.5 + (pow(1.25 + ((0.5 - x[0])) * ((0.5 - x[0])), 0.5 + 0.25 * tanh((x[3] + x[0])))) * (pow(1.25 + ((0.5 - x[0])) * ((0.5 - x[0])), 0.5 + 0.25 * tanh((x[3] + x[0]))))))), 0 };
  for (int i = 0; i < 6; i++) { a[i] = ((cos(x[(i + 1) % 4]) - log(1.0 + (x[(i + 1) % 4]) * (x[(i + 1) % 4]))) * exp(0.5 * tanh((x[(i + 1) % 4] * x[i % 4])))) + 0.1 * i; b[i] = sin(log(1.0 + (a[i]) * (a[i]))); }
  { v2d v7p = {a[5], b[0]}, v7q = {s, a[3]};
    v2d v7r = v7p * v7q + __builtin_shufflevector(v7p, v7q, 1, 2);
    a[1] = tanh(v7r[0]); b[0] = tanh(v7r[1]); }
  { uint64_t w1; memcpy(&w1, &a[0], sizeof w1); memcpy(&b[5], &w1, sizeof w1); }
  for (int i2 = 0; i2 < 6; i2++)
    for (int j3 = 0; j3 <= i2; j3++) a[i2] = 0.75 * a[i2] + 0.25 * tanh(sin(a[j3]));
  if ((1.25 * 1.25) > -0.2) {
    memcpy(b + 0, a + 5, 1 * sizeof(double));
  } else {
    a[1] = tanh((tanh(t) / (1.5 + (s) * (s))));
  }
  a[3] = tanh(ib_from(ib_to(a[0] * b[3])) + 0.5 * ib_from(ib_to(s)));
  for (int i4 = 0; i4 < 6; i4++)
    for (int j5 = 0; j5 <= i4; j5++) t = 0.75 * t + 0.25 * sin((x[j5 % 4] - b[j5]));
  for (int i6 = 0; i6 < 6; i6++) { s = 0.5 * s + 0.5 * tanh((x[i6 % 4] * x[i6 % 4])); }
  static const double wa[6] = {-0.779, -0.938, 0.177, -0.239, -0.210, 0.959}, wb[6] = {-0.739, -0.743, 0.523, 0.091, -0.824, 0.225};
  double out = s + 0.5 * t + 0.25 * st.u - 0.125 * st.v;
  for (int i = 0; i < 6; i++) out += wa[i] * a[i] + wb[i] * b[i];
  free(b);
  return out;
}

int main(void) {
  double x[4] = {0.0468, 0.8061, 0.6997, 0.5697};
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
