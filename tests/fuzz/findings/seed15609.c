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

__attribute__((noinline)) double h0_array(double *p, int n, double v) {
  double acc = 0.0;
  for (int i = 0; i < n; i++) { p[i] = tanh((((v * v) * (v * v)) + sin(v))); acc += p[i] * 0.25; }
  return acc;
}

__attribute__((noinline)) void h1_u64copy(void *dst, const void *src, int n) {
  for (int i = 0; i < n; i++) { uint64_t w; memcpy(&w, (const char *)src + 8 * i, 8); memcpy((char *)dst + 8 * i, &w, 8); }
}

__attribute__((noinline)) void ic_bytes(void *d, const void *s, int n) {
  char *dd = d; const char *ss = s;
  for (int i = 0; i < n; i++) dd[i] = ss[i];
}

__attribute__((noinline)) double f(const double *x) {
  double a[6];
  double *b = malloc(6 * sizeof(double));
  double s = sin(exp(0.5 * tanh(pow(1.25 + (pow(1.25 + (x[1]) * (x[1]), 0.5 + 0.25 * tanh(x[1]))) * (pow(1.25 + (x[1]) * (x[1]), 0.5 + 0.25 * tanh(x[1]))), 0.5 + 0.25 * tanh((x[0] - x[0])))))), t = tanh(cos(x[2]));
  struct S st = { x[1] * 0.5, sin((((1.25 * 1.25) - (x[3] - x[3])) / (1.5 + (sqrt(1.0 + (x[3]) * (x[3]))) * (sqrt(1.0 + (x[3]) * (x[3])))))), 1 };
  for (int i = 0; i < 6; i++) { a[i] = sin(exp(0.5 * tanh(cos(x[i % 4])))) + 0.1 * i; b[i] = sin((a[i] + (pow(1.25 + (x[(i + 2) % 4]) * (x[(i + 2) % 4]), 0.5 + 0.25 * tanh(x[(i + 2) % 4])) * x[(i + 2) % 4]))); }
  memmove(a + 2, a + 2, 2 * sizeof(double));
  for (int i1 = 0; i1 < 5; i1++) a[i1] = tanh((tanh((a[i1] + a[i1])) - s));
  { float u6 = (float)tanh(sin(cos(a[5])));
    u6 = sinf(u6) * 0.5f + logf(1.5f + u6 * u6) * (float)sin((((x[1] + a[5]) / (1.5 + (x[1]) * (x[1]))) - ((a[5] + s) - t)));
    t = t + 0.25 * u6; }
  { double r9 = 0.5 * s;
  #pragma omp parallel for firstprivate(r9)
    for (int k8 = 0; k8 < 6; k8++) b[k8] = b[k8] + r9 * a[k8]; }
  { double *p2 = a + 1;
    for (int i3 = 0; i3 < 3; i3++) { *p2 = sin((0.5 * 0.5)); p2++; }
    t = t + 0.5 * p2[-1]; }
  ic_bytes(&b[2], &a[2], 24);
  { double *p4 = b + 1;
    for (int i5 = 0; i5 < 3; i5++) { *p4 = sin((s * s)); p4++; }
    t = t + 0.5 * p4[-1]; }
  static const double wa[6] = {0.345, -0.797, -0.645, -0.252, -0.135, -0.086}, wb[6] = {0.193, -0.135, -0.511, 0.817, 0.877, -0.686};
  double out = s + 0.5 * t + 0.25 * st.u - 0.125 * st.v;
  for (int i = 0; i < 6; i++) out += wa[i] * a[i] + wb[i] * b[i];
  free(b);
  return out;
}

int main(void) {
  double x[4] = {-0.8953, -0.4860, -0.1241, -0.5762};
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
