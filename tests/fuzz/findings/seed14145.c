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
  return cos(cos((v * v)));
}

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
  { int k10 = 0;
    again11: t = t + 0.2 * sin((exp(0.5 * tanh(pow(1.25 + (b[k10]) * (b[k10]), 0.5 + 0.25 * tanh(b[k10])))) - (sqrt(1.0 + (t) * (t)) - 0.5)));
    if (++k10 < 3 && t < 2.0) goto again11; }
  st.u = tanh(log(1.0 + (exp(0.5 * tanh(b[0]))) * (exp(0.5 * tanh(b[0]))))); st.v = st.v * 0.5 + tanh((((a[5] * a[5]) * (a[5] * a[5])) - x[3]));
  s = s + 0.25 * st.u * st.v;
  for (int i1 = 0; i1 < 6; i1++)
    for (int j2 = 0; j2 <= i1; j2++) b[i1] = 0.75 * b[i1] + 0.25 * sin(sin(a[j2]));
  { int m3 = 1 + (int)(2.0 * (1.0 + tanh(sqrt(1.0 + (exp(0.5 * tanh(sqrt(1.0 + (-0.3) * (-0.3))))) * (exp(0.5 * tanh(sqrt(1.0 + (-0.3) * (-0.3)))))))));
    for (int i4 = 0; i4 < m3; i4++) a[i4] = 0.5 * a[i4] + 0.5 * tanh(pow(1.25 + (a[i4]) * (a[i4]), 0.5 + 0.25 * tanh(exp(0.5 * tanh(sqrt(1.0 + (t) * (t))))))); }
  { double r15 = 0.5 * s;
  #pragma omp parallel for firstprivate(r15)
    for (int k14 = 0; k14 < 6; k14++) b[k14] = b[k14] + r15 * a[k14]; }
  { int k5 = 0; while (k5 < 6 && s < 1.5) { s = s + 0.3 + 0.2 * sin((a[k5] * b[k5])); k5++; } }
  { uint64_t w6; memcpy(&w6, &b[5], sizeof w6); memcpy(&b[3], &w6, sizeof w6); }
  for (int i7 = 0; i7 < 5; i7++) a[i7] = sin(exp(0.5 * tanh((log(1.0 + (1.25) * (1.25)) * log(1.0 + (1.25) * (1.25))))));
  { __m128d m9 = _mm_loadu_pd(&b[4]);
    m9 = _mm_add_pd(_mm_mul_pd(m9, m9), _mm_set1_pd(0.25 * tanh(t)));
    _mm_storeu_pd(&a[0], _mm_mul_pd(m9, _mm_set1_pd(0.5))); }
  ic_bytes(&b[2], &a[3], 24);
  { double *p12 = calloc(4, sizeof(double));
    for (int k13 = 0; k13 < 4; k13++) p12[k13] += tanh(cos((a[k13] * a[k13])));
    for (int k13 = 0; k13 < 4; k13++) s = s + 0.2 * p12[k13] * p12[4 - 1 - k13];
    free(p12); }
  { uint64_t w8; memcpy(&w8, &a[3], sizeof w8); memcpy(&b[1], &w8, sizeof w8); }
  static const double wa[6] = {-0.091, 0.328, 0.513, 0.944, -0.715, -0.134}, wb[6] = {0.634, 0.705, -0.992, -0.866, 0.382, 0.990};
  double out = s + 0.5 * t + 0.25 * st.u - 0.125 * st.v;
  for (int i = 0; i < 6; i++) out += wa[i] * a[i] + wb[i] * b[i];
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
