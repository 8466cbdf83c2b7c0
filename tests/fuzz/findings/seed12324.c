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

static double h0_array(double *p, int n, double v) {
  double acc = 0.0;
  for (int i = 0; i < n; i++) { p[i] = tanh(cos((v * pow(1.25 + (p[i]) * (p[i]), 0.5 + 0.25 * tanh(p[i]))))); acc += p[i] * v; }
  return acc;
}

static void ic_bytes(void *d, const void *s, int n) {
  char *dd = d; const char *ss = s;
  for (int i = 0; i < n; i++) dd[i] = ss[i];
}

__attribute__((noinline)) struct T3 t3_make(double u, double w) { struct T3 r = { u * w, tanh(u - w), u + 0.5 * w }; return r; }

__attribute__((noinline)) double f(const double *x) {
  double a[6];
  double *b = malloc(6 * sizeof(double));
  double s = tanh((log(1.0 + ((x[0] + x[0])) * ((x[0] + x[0]))) / (1.5 + (0.5) * (0.5)))), t = tanh(((log(1.0 + (x[2]) * (x[2])) / (1.5 + ((x[2] + x[3])) * ((x[2] + x[3])))) + x[2]));
  struct S st = { x[1] * 0.5, sin(pow(1.25 + ((x[3] + (-0.3 / (1.5 + (x[0]) * (x[0]))))) * ((x[3] + (-0.3 / (1.5 + (x[0]) * (x[0]))))), 0.5 + 0.25 * tanh(x[3]))), 2 };
  for (int i = 0; i < 6; i++) { a[i] = sin(tanh(tanh(x[(i + 1) % 4]))) + 0.1 * i; b[i] = sin(exp(0.5 * tanh(((a[i] / (1.5 + (x[(i + 2) % 4]) * (x[(i + 2) % 4]))) - sqrt(1.0 + (0.5) * (0.5)))))); }
  { uint64_t w1; memcpy(&w1, &b[4], sizeof w1); memcpy(&a[1], &w1, sizeof w1); }
  if (pow(1.25 + (tanh(b[2])) * (tanh(b[2])), 0.5 + 0.25 * tanh(sqrt(1.0 + ((s * -0.3)) * ((s * -0.3))))) > 0.3) {
    t = 0.5 * t + 0.5 * tanh(h0_array(a + 2, 4, b[5]));
  } else {
    memmove(b + 0, b + 1, 1 * sizeof(double));
  }
  { struct T3 q5 = t3_make(a[1], b[2]);
    b[4] = tanh(q5.x * q5.z + q5.y); s = s + 0.125 * q5.y; }
  { uint64_t w2; memcpy(&w2, &b[0], sizeof w2); memcpy(&b[4], &w2, sizeof w2); }
  st.u = sin(((cos(b[4]) - exp(0.5 * tanh(0.5))) * cos(b[4]))); st.v = st.v * 0.5 + tanh(tanh(s));
  s = s + 0.25 * st.u * st.v;
  memmove(a + 0, a + 3, 1 * sizeof(double));
  { uint64_t w3; memcpy(&w3, &a[2], sizeof w3); memcpy(&a[3], &w3, sizeof w3); }
  if ((t / (1.5 + (((t * t) - x[0])) * (((t * t) - x[0])))) > 0.1) {
    memmove(b + 1, b + 1, 5 * sizeof(double));
  } else {
    { int k4 = 0; while (k4 < 6 && s < 2.5) { s = s + 0.3 + 0.2 * tanh(tanh(sin((b[k4] - 0.75)))); k4++; } }
  }
  ic_bytes(&b[0], &a[4], 8);
  static const double wa[6] = {-0.682, -0.310, 0.732, 0.434, 0.228, -0.124}, wb[6] = {-0.567, -0.073, -0.591, 0.711, -0.694, 0.148};
  double out = s + 0.5 * t + 0.25 * st.u - 0.125 * st.v;
  for (int i = 0; i < 6; i++) out += wa[i] * a[i] + wb[i] * b[i];
  free(b);
  return out;
}

int main(void) {
  double x[4] = {0.7526, 0.7098, 0.6659, 0.8466};
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
