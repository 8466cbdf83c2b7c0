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
__attribute__((noinline)) void ic_bytes(void *d, const void *s, int n) {
  char *dd = d; const char *ss = s;
  for (int i = 0; i < n; i++) dd[i] = ss[i];
}
__attribute__((noinline)) double f(const double *x) {
  double a[6];
  double *b = malloc(6 * sizeof(double));
  double s = sin(cos(cos(0.5))), t = tanh(cos(x[3]));
  struct S st = { x[1] * 0.5, tanh(exp(0.5 * tanh(x[3]))), 0 };
  for (int i = 0; i < 6; i++) { a[i] = tanh(((x[(i + 1) % 4] * x[i % 4]) / (1.5 + (sin(x[(i + 1) % 4])) * (sin(x[(i + 1) % 4]))))) + 0.1 * i; b[i] = sin((cos(tanh(0.75)) - x[(i + 2) % 4])); }
  { double r15 = 0.5 * s;
  #pragma omp parallel for firstprivate(r15)
    for (int k14 = 0; k14 < 6; k14++) b[k14] = b[k14] + r15 * a[k14]; }
  ic_bytes(&b[2], &a[3], 24);
  { double *p12 = calloc(4, sizeof(double));
    free(p12); }
  double out = s + 0.5 * t + 0.25 * st.u - 0.125 * st.v;
  free(b);
  return out;
}
int main(void) {
  double x[4] = {0.4063, 0.1310, -0.3605, -0.2581};
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
