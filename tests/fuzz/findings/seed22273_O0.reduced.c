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
__attribute__((noinline)) double h0_array(double *p, int n, double v) {
  double acc = 0.0;
  for (int i = 0; i < n; i++) { p[i] = sin((sin(pow(1.25 + (-0.3) * (-0.3), 0.5 + 0.25 * tanh(v))) * cos(pow(1.25 + (v) * (v), 0.5 + 0.25 * tanh(v))))); acc += p[i] * 0.5; }
  return acc;
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
  double s = sin(pow(1.25 + (x[0]) * (x[0]), 0.5 + 0.25 * tanh(x[1]))), t = sin(exp(0.5 * tanh((sin(x[2]) * x[3]))));
  struct S st = { x[1] * 0.5, tanh(exp(0.5 * tanh((pow(1.25 + (x[0]) * (x[0]), 0.5 + 0.25 * tanh(x[3])) * pow(1.25 + (x[0]) * (x[0]), 0.5 + 0.25 * tanh(x[3])))))), 1 };
  for (int i = 0; i < 6; i++) { a[i] = exp(0.5 * tanh(x[(i + 1) % 4])) + 0.1 * i; b[i] = sin(tanh(0.75)); }
  { double *p17 = malloc(4 * sizeof(double));
    free(p17); }
  if (cos(a[0]) > 0.1) {
    t = 0.5 * t + 0.5 * tanh(h0_array(b + 1, 3, a[1]));
  }
  { uint64_t u12, v13; memcpy(&u12, &b[1], 8); memcpy(&v13, &a[3], 8);
    uint64_t w10 = (u12 & 0x7fffffffffffffffull) | (v13 & 0x8000000000000000ull); double d11; memcpy(&d11, &w10, 8); s = s + 0.25 * d11; }
  if (((a[3] * (x[0] * a[3])) * (a[3] * (x[0] * a[3]))) > -0.2) {
  }
  { int n8 = (int)(3.0 * (1.0 + tanh((sqrt(1.0 + (cos(x[0])) * (cos(x[0]))) - (1.25 + log(1.0 + (0.5) * (0.5)))))));
    for (int k7 = 0; k7 < n8; k7 += 2) { b[k7] = 0.5 * b[k7] + 0.5 * tanh(exp(0.5 * tanh(b[k7]))); } }
  { float fa16[6];
    for (int k15 = 0; k15 < 6; k15++) fa16[k15] = (float)(a[k15] * 0.5) + expf(-(float)b[k15] * (float)b[k15]);
    for (int k15 = 0; k15 < 6; k15++) t = t + 0.1 * fa16[k15] * fa16[(k15 + 1) % 6]; }
  double out = s + 0.5 * t + 0.25 * st.u - 0.125 * st.v;
  free(b);
  return out;
}
int main(void) {
  double x[4] = {0.5595, 0.8981, -0.6400, 0.5621};
  double g[4] = {0};
  printf("VAL %.17g\n", f(x));
  printf("TOL 1e-5 2e-2 2e-2\n");
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
  static const double steps[3] = {1e-2, 1e-3, 1e-4};
  for (int k = 0; k < 3; k++)
    for (int i = 0; i < 4; i++) {
      double xp[4], xm[4];
      memcpy(xp, x, sizeof xp); memcpy(xm, x, sizeof xm);
      xp[i] += steps[k]; xm[i] -= steps[k];
      printf("FD %g %d %.17g\n", steps[k], i, (f(xp) - f(xm)) / (xp[i] - xm[i]));
    }
  return 0;
}
