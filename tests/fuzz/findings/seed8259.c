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
struct S { double u; double v; int k; };
struct V { double *p; int n; double w; };
struct DL { double d; long k; };
struct SP { double *p; long n; };
struct PP { double *p; double *q; };
struct T3 { double x, y, z; };

static double h0_scalar(double u, double v) {
  return sqrt(1.0 + (tanh(0.5)) * (tanh(0.5)));
}

__attribute__((noinline)) struct PP pp_two(double *p, double *r, int i, int j) { struct PP o = { p + i, r + j }; return o; }

__attribute__((noinline)) double f(const double *x) {
  double a[6];
  double *b = malloc(6 * sizeof(double));
  double s = sin(sin((x[1] * sin(x[0])))), t = sin((x[3] * x[3]));
  struct S st = { x[1] * 0.5, tanh(tanh(x[3])), 1 };
  for (int i = 0; i < 6; i++) { a[i] = (x[(i + 1) % 4] - (sin(1.25) - x[i % 4])) + 0.1 * i; b[i] = tanh((exp(0.5 * tanh(0.5)) - 1.25)); }
  b[0] = sin(pow(1.25 + (sin(x[0])) * (sin(x[0])), 0.5 + 0.25 * tanh(b[3])));
  { double *p1 = a + 2;
    for (int i2 = 0; i2 < 2; i2++) { *p1 = tanh(sqrt(1.0 + ((sqrt(1.0 + (t) * (t)) - (*p1 + t))) * ((sqrt(1.0 + (t) * (t)) - (*p1 + t))))); p1++; }
    t = t + 0.5 * p1[-1]; }
  { uint64_t w3; memcpy(&w3, &a[1], sizeof w3); memcpy(&a[1], &w3, sizeof w3); }
  if (pow(1.25 + (x[0]) * (x[0]), 0.5 + 0.25 * tanh((s - (0.5 * a[1])))) > 0.1) {
    memcpy(a + 4, b + 1, 1 * sizeof(double));
  } else {
    b[1] = tanh(log(1.0 + (log(1.0 + ((a[5] * s)) * ((a[5] * s)))) * (log(1.0 + ((a[5] * s)) * ((a[5] * s))))));
  }
  { struct PP sp4 = pp_two(a, b, 0, 3);
    sp4.p[0] = tanh(sp4.p[0] * sp4.q[0] + 0.5 * s); }
  static const double wa[6] = {0.215, -0.675, 0.412, -0.653, 0.050, -0.639}, wb[6] = {-0.978, -0.311, 0.665, 0.862, 0.914, 0.032};
  double out = s + 0.5 * t + 0.25 * st.u - 0.125 * st.v;
  for (int i = 0; i < 6; i++) out += wa[i] * a[i] + wb[i] * b[i];
  free(b);
  return out;
}

int main(void) {
  double x[4] = {-0.1069, -0.2646, 0.6271, 0.0975};
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
