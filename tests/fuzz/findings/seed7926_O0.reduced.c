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
static void h0_u64copy(void *dst, const void *src, int n) {
}
__attribute__((noinline)) double f(const double *x) {
  double a[6];
  double *b = malloc(6 * sizeof(double));
  double s = sin((tanh(x[1]) - tanh((x[1] * x[0])))), t = tanh((tanh(x[2]) * exp(0.5 * tanh(x[2]))));
  struct S st = { x[1] * 0.5, sin(cos(x[0])), 0 };
  for (int i = 0; i < 6; i++) { a[i] = (sqrt(1.0 + ((x[(i + 1) % 4] * 0.75)) * ((x[(i + 1) % 4] * 0.75))) * sqrt(1.0 + ((x[(i + 1) % 4] * 0.75)) * ((x[(i + 1) % 4] * 0.75)))) + 0.1 * i; b[i] = sin((((x[(i + 2) % 4] * x[(i + 2) % 4]) * (a[i] * a[i])) * ((x[(i + 2) % 4] * x[(i + 2) % 4]) * (a[i] * a[i])))); }
  { __m128d m5 = _mm_loadu_pd(&b[4]);
    _mm_storeu_pd(&a[1], _mm_mul_pd(m5, _mm_set1_pd(0.5))); }
  { double *q6r[2] = { a, b };
    for (int p = 0; p < 2; p++) for (int c = 0; c < 3; c++) q6r[p][c + 1] = tanh(q6r[1 - p][c] * 0.5 + t); }
  static const double wa[6] = {-0.133, -0.211, -0.910, -0.100, -0.890, 0.581}, wb[6] = {-0.003, 0.811, 0.196, -0.365, 0.014, -0.267};
  double out = s + 0.5 * t + 0.25 * st.u - 0.125 * st.v;
  for (int i = 0; i < 6; i++) out += wa[i] * a[i] + wb[i] * b[i];
  free(b);
  return out;
}
int main(void) {
  double x[4] = {0.3422, -0.3303, 0.4929, -0.5256};
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
