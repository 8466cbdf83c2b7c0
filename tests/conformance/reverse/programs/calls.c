/* Calls in reverse mode: noinline helpers called many times, recursion, mutual recursion,
 * one callee with different activity at different call sites, static and inline
 * functions, struct returns, int out-params, several levels deep; side effects once. */
#include "hcheck.h"
extern int enzyme_dup, enzyme_const, enzyme_out;
double __enzyme_autodiff(void *, ...);
enum { N = 6 };

static int primal_calls; /* counts runs of a primal side effect */

__attribute__((noinline)) static double sq_plus(double a, double b) { return a * a + sin(b); }
static inline double lerp(double a, double b, double t) { return a + t * (b - a); }
__attribute__((noinline)) double dot(const double *a, const double *b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}
double c_many(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) s += sq_plus(x[i], x[j]) * lerp(x[i], x[j], 0.3);
  return s;
}
double rpow(double x, int k) { return k == 0 ? 1.0 : x * rpow(x, k - 1); }
double tree_sum(const double *x, int lo, int hi) {
  if (hi - lo == 1) return x[lo] * x[lo];
  int mid = (lo + hi) / 2;
  return tree_sum(x, lo, mid) * 0.5 + sin(tree_sum(x, mid, hi));
}
double is_even_f(double x, int k);
double is_odd_f(double x, int k) { return k == 0 ? x : is_even_f(x * 1.1, k - 1) + x; }
double is_even_f(double x, int k) { return k == 0 ? x * x : is_odd_f(cos(x), k - 1) * x; }
double c_recursion(const double *x, int n) {
  return rpow(x[0], 5) + tree_sum(x, 0, n) + is_odd_f(x[1], 5);
}
/* the same callee, x active at one site, inactive (a constant table) at another */
static const double W[N] = {0.5, -1.0, 2.0, 0.25, 1.5, -0.75};
double c_activity(const double *x, int n) {
  double wx = dot(W, x, n);
  double xx = dot(x, x, n);
  double ww = dot(W, W, n);
  return wx * xx + ww * x[0];
}
typedef struct { double lo, hi; } range;
typedef struct { double m[3]; int count; } stats;
__attribute__((noinline)) range minmax_soft(const double *x, int n) {
  range r = {x[0], x[0]};
  for (int i = 1; i < n; i++) { r.lo = fmin(r.lo, x[i]); r.hi = fmax(r.hi, x[i]); }
  return r;
}
__attribute__((noinline)) stats moments(const double *x, int n) {
  stats s = {{0, 0, 0}, 0};
  for (int i = 0; i < n; i++) { s.m[0] += x[i]; s.m[1] += x[i] * x[i]; s.m[2] += x[i] * x[i] * x[i]; s.count++; }
  return s;
}
double c_struct_ret(const double *x, int n) {
  range r = minmax_soft(x, n);
  stats s = moments(x, n);
  double mean = s.m[0] / s.count;
  return (r.hi - r.lo) * mean + s.m[1] / s.count - mean * mean + s.m[2];
}
__attribute__((noinline)) static int argmax(const double *x, int n, double *best) {
  int k = 0;
  for (int i = 1; i < n; i++) if (x[i] > x[k]) k = i;
  *best = x[k];
  return k;
}
__attribute__((noinline)) static void split_pos_neg(const double *x, int n, double *pos, int *npos) {
  *npos = 0;
  for (int i = 0; i < n; i++) if (x[i] > 0) pos[(*npos)++] = x[i];
}
double c_outparams(const double *x, int n) {
  double best;
  int k = argmax(x, n, &best);
  double pos[N];
  int np;
  split_pos_neg(x, n, pos, &np);
  double s = best * best * (k + 1);
  for (int i = 0; i < np; i++) s += log(1 + pos[i]);
  return s;
}
__attribute__((noinline)) double level3(double a) { return exp(-a * a); }
__attribute__((noinline)) double level2(double a, double b) { return level3(a - b) * b; }
__attribute__((noinline)) double level1(const double *x, int i) { return level2(x[i], x[i + 1]) + level3(x[i]); }
double c_deep(const double *x, int n) {
  double s = 0;
  for (int i = 0; i + 1 < n; i++) s += level1(x, i);
  primal_calls++;
  return s;
}
static double c_static(const double *x, int n) {
  double s = 1;
  for (int i = 0; i < n; i++) s *= 1 + 0.2 * sq_plus(x[i], 0.0);
  return s;
}

typedef double (*fn)(const double *, int);
static void check(const char *name, fn f, double got[N], const double *x) {
  for (int i = 0; i < N; i++) {
    double xp[N], xm[N];
    for (int k = 0; k < N; k++) xp[k] = xm[k] = x[k];
    double h = hc_h(x[i]);
    xp[i] += h; xm[i] -= h;
    char buf[64];
    snprintf(buf, sizeof buf, "%s d[%d]", name, i);
    hc_near(buf, got[i], (f(xp, N) - f(xm, N)) / (2 * h), 1e-6);
  }
}
#define CHECK(f) do { double d[N] = {0}; \
    __enzyme_autodiff((void *)f, enzyme_dup, x, d, enzyme_const, N); check(#f, f, d, x); } while (0)

int main(void) {
  double x[N] = {0.3, -0.45, 0.8, 0.15, -0.6, 0.55};
  CHECK(c_many); CHECK(c_recursion); CHECK(c_activity); CHECK(c_struct_ret);
  CHECK(c_outparams); CHECK(c_static);
  primal_calls = 0;
  CHECK(c_deep); /* the checker runs the primal 2N more times */
  hc_near("primal side effect once", primal_calls, 1 + 2 * N, 0);
  {
    /* scalar recursion with enzyme_out and an int const */
    double g = __enzyme_autodiff((void *)rpow, enzyme_out, 1.3, enzyme_const, 7);
    hc_near("rpow", g, 7 * pow(1.3, 6), 1e-12);
    g = __enzyme_autodiff((void *)is_odd_f, 0.4, 6);
    double h = 1e-6;
    hc_near("mutual", g, (is_odd_f(0.4 + h, 6) - is_odd_f(0.4 - h, 6)) / (2 * h), 1e-6);
  }
  return hc_done();
}
