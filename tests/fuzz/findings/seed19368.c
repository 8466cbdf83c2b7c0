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

static void h0_u64copy(void *dst, const void *src, int n) {
  for (int i = 0; i < n; i++) { uint64_t w; memcpy(&w, (const char *)src + 8 * i, 8); memcpy((char *)dst + 8 * i, &w, 8); }
}

__attribute__((noinline)) double f(const double *x) {
  double a[6];
  double *b = malloc(6 * sizeof(double));
  double s = sin(exp(0.5 * tanh(x[1]))), t = sin(cos(x[2]));
  struct S st = { x[1] * 0.5, sin((x[0] - cos(x[3]))), 1 };
  for (int i = 0; i < 6; i++) { a[i] = log(1.0 + (log(1.0 + (exp(0.5 * tanh(x[i % 4]))) * (exp(0.5 * tanh(x[i % 4]))))) * (log(1.0 + (exp(0.5 * tanh(x[i % 4]))) * (exp(0.5 * tanh(x[i % 4])))))) + 0.1 * i; b[i] = tanh((((x[(i + 2) % 4] - 1.25) - x[(i + 2) % 4]) * ((x[(i + 2) % 4] - 1.25) - x[(i + 2) % 4]))); }
  if (exp(0.5 * tanh((a[3] * a[3]))) > 0.1) {
    h0_u64copy(b + 2, a + 2, 3);
  } else {
    { uint64_t w1; memcpy(&w1, &a[1], sizeof w1); memcpy(&b[1], &w1, sizeof w1); }
  }
  { int k3 = 0, n4 = (int)(5.5 * tanh(((s - exp(0.5 * tanh(s))) * (x[3] - (t * a[4])))));
    do { t = 0.5 * t + 0.5 * tanh(cos(s)); } while (++k3 < n4); }
  st.u = tanh(pow(1.25 + ((pow(1.25 + (x[2]) * (x[2]), 0.5 + 0.25 * tanh(s)) - tanh(b[3]))) * ((pow(1.25 + (x[2]) * (x[2]), 0.5 + 0.25 * tanh(s)) - tanh(b[3]))), 0.5 + 0.25 * tanh(cos((x[2] * x[2]))))); st.v = st.v * 0.5 + sin(sqrt(1.0 + (s) * (s)));
  { uint64_t u8, v9; memcpy(&u8, &b[5], 8); memcpy(&v9, &a[0], 8);
    uint64_t w6 = log(1.0 + (1.25) * (1.25)) > 0 ? u8 : v9; memcpy(&b[5], &w6, 8); double d7; memcpy(&d7, &w6, 8); s = s + 0.25 * d7; }
  switch ((int)(2.0 * (1.0 + sin(exp(0.5 * tanh((b[1] / (1.5 + (s) * (s))))))))) {
    case 0: s = 0.5 * s + 0.5 * tanh(((b[1] * t) * sqrt(1.0 + (1.25) * (1.25)))); break;
    case 1: t = 0.5 * t + 0.5 * sin(((cos(1.25) / (1.5 + (b[1]) * (b[1]))) / (1.5 + (cos(sqrt(1.0 + (a[1]) * (a[1])))) * (cos(sqrt(1.0 + (a[1]) * (a[1])))))));   /* falls through */
    case 2: a[3] = 0.5 * a[3] + 0.5 * tanh(sin((t * t))); break;
    default: b[2] = 0.5 * b[2] + 0.5 * tanh((t * ((a[1] * t) * (t * t))));
  }
  { static const int q2i[6] = {3, 1, 0, 4, 5, 4};
    for (int p = 0; p < 6; p++) b[q2i[p]] += 0.25 * tanh(a[p] * s); }
  { double *p11 = malloc(2 * sizeof(double)); p11[0] = sin((a[0] * cos(b[0]))); p11[1] = sin((s - cos(sqrt(1.0 + (b[1]) * (b[1])))));
    p11 = realloc(p11, 6 * sizeof(double));
    for (int k12 = 2; k12 < 6; k12++) p11[k12] = 0.5 * p11[k12 - 1] + 0.5 * sin(pow(1.25 + (exp(0.5 * tanh(x[k12 % 4]))) * (exp(0.5 * tanh(x[k12 % 4]))), 0.5 + 0.25 * tanh(((b[k12] + -0.3) + b[k12]))));
    for (int k12 = 0; k12 < 6; k12++) s = s + 0.1 * p11[k12];
    free(p11); }
  s = s + 0.25 * st.u * st.v;
  memmove(b + 0, b + 1, 5 * sizeof(double));
  memmove(a + 3, a + 0, 3 * sizeof(double));
  static const double wa[6] = {0.477, -0.001, 0.252, -0.840, 0.014, 0.649}, wb[6] = {-0.392, 0.398, -0.120, 0.083, -0.352, 0.704};
  double out = s + 0.5 * t + 0.25 * st.u - 0.125 * st.v;
  for (int i = 0; i < 6; i++) out += wa[i] * a[i] + wb[i] * b[i];
  free(b);
  return out;
}

int main(void) {
  double x[4] = {0.4647, -0.1951, -0.3838, -0.0087};
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
