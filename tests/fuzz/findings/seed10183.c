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

static double h0_scalar(double u, double v) {
  return (u + ((1.25 + v) + (u * u)));
}

__attribute__((noinline)) double f(const double *x) {
  double a[6];
  double *b = malloc(6 * sizeof(double));
  double s = sin(cos(sin((x[0] - x[0])))), t = tanh((log(1.0 + (-0.3) * (-0.3)) + sqrt(1.0 + ((x[3] * x[2])) * ((x[3] * x[2])))));
  struct S st = { x[1] * 0.5, tanh(sin((tanh(x[0]) + (x[0] / (1.5 + (x[3]) * (x[3])))))), 1 };
  for (int i = 0; i < 6; i++) { a[i] = cos(log(1.0 + (x[i % 4]) * (x[i % 4]))) + 0.1 * i; b[i] = sin((exp(0.5 * tanh(cos(a[i]))) * exp(0.5 * tanh(cos(a[i]))))); }
  { uint64_t w1; memcpy(&w1, &b[0], sizeof w1); memcpy(&a[3], &w1, sizeof w1); }
  if (sqrt(1.0 + (((s + b[0]) + (x[0] * x[0]))) * (((s + b[0]) + (x[0] * x[0])))) > -0.2) {
    s = tanh(h0_scalar(cos(0.5), s));
  } else {
    memcpy(b + 0, a + 1, 5 * sizeof(double));
  }
  { v2d v4p = {a[0], b[0]}, v4q = {s, a[0]};
    v2d v4r = v4p * v4q + __builtin_shufflevector(v4p, v4q, 1, 2);
    a[5] = tanh(v4r[0]); b[2] = tanh(v4r[1]); }
  for (int i2 = 0; i2 < 5; i2++) a[i2] = sin((cos((a[i2 + 1] * a[i2 + 1])) * log(1.0 + (pow(1.25 + (a[i2 + 1]) * (a[i2 + 1]), 0.5 + 0.25 * tanh(a[i2 + 1]))) * (pow(1.25 + (a[i2 + 1]) * (a[i2 + 1]), 0.5 + 0.25 * tanh(a[i2 + 1]))))));
  { int k3 = 0; while (k3 < 6 && s < 1.5) { s = s + 0.3 + 0.2 * sin(sqrt(1.0 + ((exp(0.5 * tanh(a[k3])) * exp(0.5 * tanh(a[k3])))) * ((exp(0.5 * tanh(a[k3])) * exp(0.5 * tanh(a[k3])))))); k3++; } }
  s = tanh(h0_scalar((((1.25 * t) / (1.5 + (pow(1.25 + (a[4]) * (a[4]), 0.5 + 0.25 * tanh(a[4]))) * (pow(1.25 + (a[4]) * (a[4]), 0.5 + 0.25 * tanh(a[4]))))) * (sin(s) + sin(a[4]))), s));
  static const double wa[6] = {-0.877, -0.661, -0.968, 0.532, 0.178, -0.403}, wb[6] = {0.929, 0.888, 0.978, 0.060, -0.119, -0.778};
  double out = s + 0.5 * t + 0.25 * st.u - 0.125 * st.v;
  for (int i = 0; i < 6; i++) out += wa[i] * a[i] + wb[i] * b[i];
  free(b);
  return out;
}

int main(void) {
  double x[4] = {-0.7759, -0.4055, -0.6545, -0.8110};
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
