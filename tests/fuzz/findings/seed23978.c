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

static volatile int rlen0 = 7;
static volatile int rpasses0 = 1;
static const double rtab0[16] = {0.979, 0.540, 0.084, -0.293, 0.416, -0.577, 0.693, -0.977, -0.646, 0.611, 0.393, -0.177, 0.095, -0.422, -0.669, -0.855};
static double h0_scalar(double u, double v) {
  return cos(sqrt(1.0 + ((u - u)) * ((u - u))));
}

static double h1_scalar(double u, double v) {
  return (u - (v * log(1.0 + (v) * (v))));
}

__attribute__((noinline)) void ic_bytes(void *d, const void *s, int n) {
  char *dd = d; const char *ss = s;
  for (int i = 0; i < n; i++) dd[i] = ss[i];
}

__attribute__((noinline)) struct SP sp_from(double *p, long n, long k) { struct SP r = { p + k, n - k }; return r; }

__attribute__((noinline)) struct SP sp_next(struct SP q) { struct SP r = { q.p + 1, q.n - 1 }; return r; }

__attribute__((noinline)) struct T3 t3_make(double u, double w) { struct T3 r = { u * w, tanh(u - w), u + 0.5 * w }; return r; }

__attribute__((noinline)) double f(const double *x) {
  double a[6];
  double *b = malloc(6 * sizeof(double));
  double s = tanh((pow(1.25 + (sin(x[0])) * (sin(x[0])), 0.5 + 0.25 * tanh(sqrt(1.0 + (-0.3) * (-0.3)))) / (1.5 + (exp(0.5 * tanh(x[0]))) * (exp(0.5 * tanh(x[0])))))), t = sin((x[2] - tanh((x[3] * x[3]))));
  struct S st = { x[1] * 0.5, tanh((x[0] * x[0])), 1 };
  for (int i = 0; i < 6; i++) { a[i] = (x[i % 4] + (x[i % 4] * x[i % 4])) + 0.1 * i; b[i] = sin((sin((x[(i + 2) % 4] * a[i])) / (1.5 + ((a[i] * (x[(i + 2) % 4] * x[(i + 2) % 4]))) * ((a[i] * (x[(i + 2) % 4] * x[(i + 2) % 4])))))); }
  { int k14 = (int)(2.0 * (1.0 + tanh((s - (tanh(x[0]) * tanh(x[0])))))) % 6;
    b[k14] = 0.5 * b[k14] + 0.5 * sin(exp(0.5 * tanh(exp(0.5 * tanh(b[k14]))))); }
  { double *p1 = b + 1;
    for (int i2 = 0; i2 < 3; i2++) { *p1 = sin((pow(1.25 + ((s * s)) * ((s * s)), 0.5 + 0.25 * tanh(log(1.0 + (s) * (s)))) / (1.5 + (s) * (s)))); p1++; }
    t = t + 0.5 * p1[-1]; }
  ic_bytes(&a[1], &b[3], 16);
  st.u = tanh((exp(0.5 * tanh((s * t))) * (s + tanh(t)))); st.v = st.v * 0.5 + tanh((s * t));
  { struct T3 q6 = t3_make(a[0], b[4]);
    b[3] = tanh(q6.x * q6.z + q6.y); s = s + 0.125 * q6.y; }
  s = s + 0.25 * st.u * st.v;
  #pragma omp parallel for
    for (int k15 = 0; k15 < 6; k15++) b[k15] = 0.5 * b[k15] + tanh(tanh((tanh(a[k15]) - s)));
  for (int i3 = 0; i3 < 6; i3++)
    for (int j4 = 0; j4 <= i3; j4++) s = 0.75 * s + 0.25 * tanh(sin(a[i3]));
  { int k7 = 0, n8 = (int)(5.5 * tanh((sin(x[1]) * sin(x[1]))));
    do { s = 0.5 * s + 0.5 * sin(((tanh(s) / (1.5 + (-0.3) * (-0.3))) / (1.5 + (x[k7 % 4]) * (x[k7 % 4])))); } while (++k7 < n8); }
  { uint64_t w10; memcpy(&w10, &b[2], 8); w10 ^= 0x8000000000000000ull;
    memcpy(&b[4], &w10, 8); }
  { struct SP sp5 = sp_next(sp_from(b, 6, 1));
    for (long q = 0; q < sp5.n && q < 2; q++) sp5.p[q] = tanh(sp5.p[q] * t + 0.25 * q); }
  { int L17 = rlen0, P18 = rpasses0;
    double row22[8];
    for (int j21 = 0; j21 < L17; j21++) row22[j21] = 0.25 * x[(j21 + 1) % 4];
    for (int p19 = 0; p19 < P18; p19++) {
      for (int j21 = 1; j21 < L17; j21++) row22[j21] = rtab0[j21 % 16] * x[j21 % 4] + 0.1 * j21;
      for (int i20 = 1; i20 < L17; i20++) t = 0.5 * t + 0.25 * (row22[i20] - row22[i20 - 1]) * sin(row22[i20]);
    }
  }
  static const double wa[6] = {-0.934, -0.049, -0.894, -0.191, 0.904, 0.478}, wb[6] = {-0.575, -0.388, -0.505, 0.719, -0.853, -0.821};
  double out = s + 0.5 * t + 0.25 * st.u - 0.125 * st.v;
  for (int i = 0; i < 6; i++) out += wa[i] * a[i] + wb[i] * b[i];
  free(b);
  return out;
}

int main(void) {
  double x[4] = {-0.1938, 0.8456, -0.5296, 0.1678};
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
