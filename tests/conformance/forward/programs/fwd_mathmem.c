/* Forward mode over math.h (double and float spellings) and memory idioms: calloc/realloc
 * workspaces, memcpy/memmove/memset of structs and arrays, unions, qsort of an integer
 * permutation, out-parameters, printf inside the differentiated code, returning through
 * scalar pointers; every tangent against central differences. */
#include <string.h>
#include "hcheck.h"
extern int enzyme_dup, enzyme_dupnoneed, enzyme_const;
double __enzyme_fwddiff(void *, ...);
float __enzyme_fwddifff(void *, ...);
void __enzyme_fwddiffv(void *, ...);

#define D1(name, expr) static double name(double x) { return expr; }
D1(m_exp2, exp2(x) + expm1(0.5 * x))
D1(m_logs, log10(x + 3.0) + log2(x + 3.0) + log1p(x * x))
D1(m_trig, atan(x) + asin(0.3 * x) + acos(0.2 * x) + tan(0.5 * x))
D1(m_hyp, sinh(x) + cosh(0.5 * x) + tanh(2.0 * x) + asinh(x) + atanh(0.4 * x))
D1(m_pow, pow(x + 2.0, 3) + pow(fabs(x) + 1.0, -0.7) + pow(2.0, x) + sqrt(x * x + 1.0) + cbrt(x + 4.0))
D1(m_special, erf(x) + erfc(0.5 * x) + lgamma(x + 3.0) + tgamma(x + 2.5))
D1(m_minmax, fmin(x, 0.2) * 3.0 + fmax(x * x, 0.1) + fabs(x - 0.3) + copysign(x * x, -1.0))
D1(m_steps, floor(3 * x) + ceil(x) + round(5 * x) + trunc(x) + x * rint(2 * x) + fmod(x * 7.0, 1.3))
D1(m_ldexp, ldexp(x, 3) + ldexp(x * x, -2) + fma(x, x, 2.0 * x))
D1(m_atan2, atan2(x, 1.5) + atan2(0.5, x + 2.0) + hypot(x, 2.0 * x + 1.0))

static float mf(float x) {
  return sinf(x) * cosf(x) + expf(0.5f * x) + logf(x + 2.0f) + powf(x + 1.5f, 2.5f) + sqrtf(x + 4.0f) +
         tanhf(x) + atan2f(x, 2.0f) + fabsf(x) + erff(x) + hypotf(x, 1.0f) + cbrtf(x + 3.0f) + fmaxf(x, -1.0f);
}

/* memory idioms */
typedef struct { double a, b; int tag; } rec;
typedef union { double d; unsigned long long u; } bits;
static int cmp_int(const void *p, const void *q) {
  int a = *(const int *)p, b = *(const int *)q;
  return (a > b) - (a < b);
}

__attribute__((noinline)) static void stats(const double *x, int n, double *mean, double *var) {
  double m = 0, v = 0;
  for (int i = 0; i < n; i++) m += x[i];
  m /= n;
  for (int i = 0; i < n; i++) v += (x[i] - m) * (x[i] - m);
  *mean = m;
  *var = v / (n - 1);
}

double memwork(const double *x, int n) {
  rec *r = calloc(n, sizeof *r);
  for (int i = 0; i < n; i++) { r[i].a = x[i]; r[i].b = x[i] * x[i]; r[i].tag = (7 * i) % n; }
  int *order = malloc(n * sizeof *order);
  for (int i = 0; i < n; i++) order[i] = r[i].tag * n + i;
  qsort(order, n, sizeof *order, cmp_int);  /* sorts integers only: no derivative */
  rec *sorted = malloc(n * sizeof *sorted);
  for (int i = 0; i < n; i++) sorted[i] = r[order[i] % n];
  memcpy(r, sorted, n * sizeof *r);
  free(sorted);
  free(order);
  double *w = malloc(2 * sizeof *w);
  int cap = 2;
  for (int i = 0; i < n; i++) {
    if (i >= cap) { cap *= 2; w = realloc(w, cap * sizeof *w); }
    w[i] = r[i].a * (i + 1) + r[i].b;
  }
  memmove(w + 1, w, (n - 1) * sizeof *w);
  rec copy;
  memcpy(&copy, &r[n - 1], sizeof copy);
  w[0] = copy.b;
  double mean, var;
  stats(w, n, &mean, &var);
  bits u;
  u.d = var;
  if (u.u >> 63) printf("negative variance %g\n", var);
  double tail[4];
  memset(tail, 0, sizeof tail);
  tail[1] = mean * var;
  free(w);
  free(r);
  printf("");
  return tail[1] + sqrt(var);
}

/* out-parameters through a scalar pointer */
void polar(double x, double y, double *r, double *th) { *r = hypot(x, y); *th = atan2(y, x); }

#define CHECK1(fn, x0) do {                                                                \
    double h_ = hc_h(x0), t_ = __enzyme_fwddiff((void *)fn, (double)(x0), 1.0);             \
    hc_near(#fn, t_, (fn((x0) + h_) - fn((x0) - h_)) / (2 * h_), 1e-6);                     \
  } while (0)

int main(void) {
  double pts[] = {-0.35, 0.15, 0.62};
  for (int k = 0; k < 3; k++) {
    double x = pts[k];
    CHECK1(m_exp2, x); CHECK1(m_logs, x); CHECK1(m_trig, x); CHECK1(m_hyp, x); CHECK1(m_pow, x);
    CHECK1(m_special, x); CHECK1(m_minmax, x); CHECK1(m_steps, x); CHECK1(m_ldexp, x); CHECK1(m_atan2, x);
  }
  /* float: closed form against a double-precision central difference of the same expression */
  float fx = 0.4f;
  float ft = __enzyme_fwddifff((void *)mf, fx, 1.0f);
  hc_near("float math", ft, (mf(fx + 1e-2f) - mf(fx - 1e-2f)) / 2e-2f, 2e-3);

  double x[7] = {0.3, -1.1, 0.7, 2.0, -0.4, 0.05, 1.3}, dir[7], xp[7], xm[7], h = 1e-6;
  for (int i = 0; i < 7; i++) { dir[i] = sin(i + 1.0); xp[i] = x[i] + h * dir[i]; xm[i] = x[i] - h * dir[i]; }
  double t = __enzyme_fwddiff((void *)memwork, enzyme_dup, x, dir, enzyme_const, 7);
  hc_near("memory idioms", t, (memwork(xp, 7) - memwork(xm, 7)) / (2 * h), 1e-6);

  double r, th, dr = 0, dth = 0;
  __enzyme_fwddiffv((void *)polar, 1.2, 0.5, -0.7, 2.0, enzyme_dupnoneed, &r, &dr, enzyme_dupnoneed, &th, &dth);
  double rr = hypot(1.2, -0.7);
  hc_near("polar dr", dr, (1.2 * 0.5 - 0.7 * 2.0) / rr, 1e-12);
  hc_near("polar dth", dth, (1.2 * 2.0 + 0.7 * 0.5) / (rr * rr), 1e-12);
  return hc_done();
}
