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
struct SP { double *p; long n; };
__attribute__((noinline)) double h0_array(double *p, int n, double v) {
  double acc = 0.0;
  for (int i = 0; i < n; i++) { p[i] = tanh((tanh(p[i]) * ((v * v) - (v * v)))); acc += p[i] * v; }
  return acc;
}
__attribute__((noinline)) struct SP sp_from(double *p, long n, long k) { struct SP r = { p + k, n - k }; return r; }
__attribute__((noinline)) double f(const double *x) {
  double a[6];
  double *b = malloc(6 * sizeof(double));
  double s = sin(((cos(x[1]) / (1.5 + ((x[1] * x[1])) * ((x[1] * x[1])))) + x[0])), t = tanh(sqrt(1.0 + (cos(tanh(x[3]))) * (cos(tanh(x[3])))));
  struct S st = { x[1] * 0.5, sin(sin(x[3])), 0 };
  for (int i = 0; i < 6; i++) { a[i] = (x[(i + 1) % 4] * x[i % 4]) + 0.1 * i; b[i] = tanh((sqrt(1.0 + (x[(i + 2) % 4]) * (x[(i + 2) % 4])) * 0.5)); }
  for (int i1 = 0; i1 < 6; i1++) {
    for (int j2 = 0; j2 < 3; j2++) t = 0.5 * t + 0.25 * sin(tanh(s));
  }
  { uint64_t w3; memcpy(&w3, &a[0], sizeof w3); memcpy(&a[3], &w3, sizeof w3); }
  if (log(1.0 + (s) * (s)) > 0.3) {
  }
  { struct SP sp4 = sp_from(a, 6, 0);
    for (long q = 0; q < sp4.n && q < 2; q++) sp4.p[q] = tanh(sp4.p[q] * t + 0.25 * q); }
  t = 0.5 * t + 0.5 * tanh(h0_array(a + 2, 1, b[2]));
  double out = s + 0.5 * t + 0.25 * st.u - 0.125 * st.v;
  free(b);
  return out;
}
int main(void) {
  double x[4] = {0.0769, 0.2263, -0.4903, -0.1510};
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
