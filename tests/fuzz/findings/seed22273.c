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
  for (int i = 0; i < n; i++) { p[i] = sin((sin(pow(1.25 + (-0.3) * (-0.3), 0.5 + 0.25 * tanh(v))) * cos(pow(1.25 + (v) * (v), 0.5 + 0.25 * tanh(v))))); acc += p[i] * 0.5; }
  return acc;
}

__attribute__((noinline)) void h1_struct(struct S *s, double v) {
  double t = s->u;
  s->u = tanh(tanh(s->u));
  s->v = tanh(log(1.0 + ((pow(1.25 + (v) * (v), 0.5 + 0.25 * tanh(t)) + pow(1.25 + (t) * (t), 0.5 + 0.25 * tanh(v)))) * ((pow(1.25 + (v) * (v), 0.5 + 0.25 * tanh(t)) + pow(1.25 + (t) * (t), 0.5 + 0.25 * tanh(v)))))) + s->k * 0.125;
}

__attribute__((noinline)) double h2_array(double *p, int n, double v) {
  double acc = 0.0;
  for (int i = 0; i < n; i++) { p[i] = tanh((p[i] * p[i])); acc += p[i] * 0.25; }
  return acc;
}

__attribute__((noinline)) struct DL dl_mix(struct DL p, double w) { struct DL r = { tanh(p.d * w + 0.25), p.k + 1 }; return r; }

static struct SP sp_from(double *p, long n, long k) { struct SP r = { p + k, n - k }; return r; }

__attribute__((noinline)) double f(const double *x) {
  double a[6];
  double *b = malloc(6 * sizeof(double));
  double s = sin(pow(1.25 + (x[0]) * (x[0]), 0.5 + 0.25 * tanh(x[1]))), t = sin(exp(0.5 * tanh((sin(x[2]) * x[3]))));
  struct S st = { x[1] * 0.5, tanh(exp(0.5 * tanh((pow(1.25 + (x[0]) * (x[0]), 0.5 + 0.25 * tanh(x[3])) * pow(1.25 + (x[0]) * (x[0]), 0.5 + 0.25 * tanh(x[3])))))), 1 };
  for (int i = 0; i < 6; i++) { a[i] = exp(0.5 * tanh(x[(i + 1) % 4])) + 0.1 * i; b[i] = sin(tanh(0.75)); }
  { double *p17 = malloc(4 * sizeof(double));
    for (int k18 = 0; k18 < 4; k18++) p17[k18] = tanh((x[k18 % 4] * x[k18 % 4]));
    double keep = p17[4 - 1]; free(p17);
    p17 = malloc(4 * sizeof(double));
    for (int k18 = 0; k18 < 4; k18++) p17[k18] = keep * a[k18];
    for (int k18 = 0; k18 < 4; k18++) s = s + 0.1 * p17[k18];
    free(p17); }
  if (cos(a[0]) > 0.1) {
    t = 0.5 * t + 0.5 * tanh(h2_array(a + 1, 1, t));
  } else {
    t = 0.5 * t + 0.5 * tanh(h0_array(b + 1, 3, a[1]));
  }
  { struct SP sp6 = sp_from(a, 6, 3);
    for (long q = 0; q < sp6.n && q < 2; q++) sp6.p[q] = tanh(sp6.p[q] * t + 0.25 * q); }
  { uint64_t u12, v13; memcpy(&u12, &b[1], 8); memcpy(&v13, &a[3], 8);
    uint64_t w10 = (u12 & 0x7fffffffffffffffull) | (v13 & 0x8000000000000000ull); double d11; memcpy(&d11, &w10, 8); s = s + 0.25 * d11; }
  a[5] = sin(exp(0.5 * tanh((b[0] * sin(0.75)))));
  b[0] = sin((tanh(sqrt(1.0 + (t) * (t))) * b[3]));
  { uint64_t w1; memcpy(&w1, &a[1], sizeof w1); memcpy(&b[2], &w1, sizeof w1); }
  if (((a[3] * (x[0] * a[3])) * (a[3] * (x[0] * a[3]))) > -0.2) {
    memmove(b + 4, b + 3, 2 * sizeof(double));
  } else {
    { uint64_t w2; memcpy(&w2, &a[3], sizeof w2); memcpy(&b[0], &w2, sizeof w2); }
  }
  { int m3 = 1 + (int)(2.0 * (1.0 + tanh((pow(1.25 + (log(1.0 + (b[5]) * (b[5]))) * (log(1.0 + (b[5]) * (b[5]))), 0.5 + 0.25 * tanh((x[1] / (1.5 + (x[1]) * (x[1]))))) + pow(1.25 + (cos(a[2])) * (cos(a[2])), 0.5 + 0.25 * tanh((x[1] - t)))))));
    for (int i4 = 0; i4 < m3; i4++) t = 0.5 * t + 0.5 * tanh(((exp(0.5 * tanh(x[i4 % 4])) * (t * s)) + log(1.0 + (s) * (s)))); }
  { struct DL q5 = { a[5], 2 }; q5 = dl_mix(q5, b[2]); a[1] = q5.d + 0.01 * q5.k; }
  { int n8 = (int)(3.0 * (1.0 + tanh((sqrt(1.0 + (cos(x[0])) * (cos(x[0]))) - (1.25 + log(1.0 + (0.5) * (0.5)))))));
    for (int k7 = 0; k7 < n8; k7 += 2) { b[k7] = 0.5 * b[k7] + 0.5 * tanh(exp(0.5 * tanh(b[k7]))); } }
  { float fa16[6];
    for (int k15 = 0; k15 < 6; k15++) fa16[k15] = (float)(a[k15] * 0.5) + expf(-(float)b[k15] * (float)b[k15]);
    for (int k15 = 0; k15 < 6; k15++) t = t + 0.1 * fa16[k15] * fa16[(k15 + 1) % 6]; }
  t = 0.5 * t + 0.5 * tanh(h0_array(b + 2, 1, x[0]));
  static const double wa[6] = {-0.955, 0.165, 0.421, -0.014, -0.540, 0.202}, wb[6] = {0.033, -0.973, 0.455, 0.163, 0.239, -0.077};
  double out = s + 0.5 * t + 0.25 * st.u - 0.125 * st.v;
  for (int i = 0; i < 6; i++) out += wa[i] * a[i] + wb[i] * b[i];
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
