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
  for (int i = 0; i < n; i++) { p[i] = tanh((tanh(p[i]) * ((v * v) - (v * v)))); acc += p[i] * v; }
  return acc;
}

static uint64_t ib_to(double v) { uint64_t w; memcpy(&w, &v, 8); return w; }

static double ib_from(uint64_t w) { double v; memcpy(&v, &w, 8); return v; }

__attribute__((noinline)) struct SP sp_from(double *p, long n, long k) { struct SP r = { p + k, n - k }; return r; }

__attribute__((noinline)) double f(const double *x) {
  double a[6];
  double *b = malloc(6 * sizeof(double));
  double s = sin(((cos(x[1]) / (1.5 + ((x[1] * x[1])) * ((x[1] * x[1])))) + x[0])), t = tanh(sqrt(1.0 + (cos(tanh(x[3]))) * (cos(tanh(x[3])))));
  struct S st = { x[1] * 0.5, sin(sin(x[3])), 0 };
  for (int i = 0; i < 6; i++) { a[i] = (x[(i + 1) % 4] * x[i % 4]) + 0.1 * i; b[i] = tanh((sqrt(1.0 + (x[(i + 2) % 4]) * (x[(i + 2) % 4])) * 0.5)); }
  st.u = sin(pow(1.25 + (pow(1.25 + (cos(a[0])) * (cos(a[0])), 0.5 + 0.25 * tanh(cos(b[4])))) * (pow(1.25 + (cos(a[0])) * (cos(a[0])), 0.5 + 0.25 * tanh(cos(b[4])))), 0.5 + 0.25 * tanh(sqrt(1.0 + (b[4]) * (b[4]))))); st.v = st.v * 0.5 + sin(pow(1.25 + ((log(1.0 + (t) * (t)) / (1.5 + (s) * (s)))) * ((log(1.0 + (t) * (t)) / (1.5 + (s) * (s)))), 0.5 + 0.25 * tanh(x[0])));
  s = s + 0.25 * st.u * st.v;
  for (int i1 = 0; i1 < 6; i1++) {
    for (int j2 = 0; j2 < 3; j2++) t = 0.5 * t + 0.25 * sin(tanh(s));
    a[i1] = 0.5 * a[i1] + 0.5 * sin(tanh(((0.5 * 0.5) - (b[i1] + s))));
  }
  a[1] = tanh(ib_from(ib_to(a[1] * b[5])) + 0.5 * ib_from(ib_to(s)));
  { uint64_t w3; memcpy(&w3, &a[0], sizeof w3); memcpy(&a[3], &w3, sizeof w3); }
  if (log(1.0 + (s) * (s)) > 0.3) {
    memmove(b + 3, b + 1, 3 * sizeof(double));
  } else {
    t = 0.5 * t + 0.5 * tanh(h0_array(b + 0, 6, b[1]));
  }
  { struct SP sp4 = sp_from(a, 6, 0);
    for (long q = 0; q < sp4.n && q < 2; q++) sp4.p[q] = tanh(sp4.p[q] * t + 0.25 * q); }
  st.u = sin(((pow(1.25 + (t) * (t), 0.5 + 0.25 * tanh(t)) * pow(1.25 + (s) * (s), 0.5 + 0.25 * tanh(b[3]))) * (pow(1.25 + (t) * (t), 0.5 + 0.25 * tanh(t)) * pow(1.25 + (s) * (s), 0.5 + 0.25 * tanh(b[3]))))); st.v = st.v * 0.5 + tanh(((exp(0.5 * tanh(x[1])) + x[1]) / (1.5 + (sqrt(1.0 + ((x[1] - x[1])) * ((x[1] - x[1])))) * (sqrt(1.0 + ((x[1] - x[1])) * ((x[1] - x[1])))))));
  s = s + 0.25 * st.u * st.v;
  t = 0.5 * t + 0.5 * tanh(h0_array(a + 2, 1, b[2]));
  static const double wa[6] = {0.489, -0.975, -0.972, -0.471, 0.383, 0.919}, wb[6] = {0.031, -0.956, -0.421, 0.951, -0.010, 0.908};
  double out = s + 0.5 * t + 0.25 * st.u - 0.125 * st.v;
  for (int i = 0; i < 6; i++) out += wa[i] * a[i] + wb[i] * b[i];
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
