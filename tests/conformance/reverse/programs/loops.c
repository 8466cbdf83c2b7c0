/* Every loop shape a numerical code uses, each a function of an array x[N], checked
 * with reverse mode against central differences. */
#include "hcheck.h"
#include <stddef.h>
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
enum { N = 9 };

static int bound_in_memory = 7;
struct cfg { int n; int stride; double scale; };

double l_for(const double *x, int n) { double s = 0; for (int i = 0; i < n; i++) s += x[i] * x[i] * (i + 1); return s; }
double l_while(const double *x, int n) { double s = 1; int i = 0; while (i < n) { s *= 1 + 0.1 * x[i]; i++; } return s; }
double l_dowhile(const double *x, int n) { double s = 0; int i = n - 1; do { s = s * 0.5 + sin(x[i]); } while (--i >= 0); return s; }
double l_break(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) { if (x[i] > 0.8) break; s += exp(x[i]) * x[i]; }
  return s;
}
double l_continue(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) { if (i % 3 == 1) continue; if (x[i] < 0) continue; s += x[i] * x[(i + 2) % n]; }
  return s;
}
double l_sizet_down(const double *x, int n) {
  double s = 0;
  for (size_t i = (size_t)n; i-- > 0;) s = s * x[i] + 1.0;
  return s;
}
double l_unsigned_wrap(const double *x, int n) {
  double s = 0;
  for (unsigned i = (unsigned)n - 1; i < (unsigned)n; i--) s += x[i] / (1.0 + i);
  return s;
}
double l_mem_bound(const double *x, int n) {
  (void)n;
  double s = 0;
  for (int i = 0; i < bound_in_memory; i++) s += cos(x[i]) * x[i + 1];
  return s;
}
double l_struct_bound(const double *x, const struct cfg *c) {
  double s = 0;
  for (int i = 0; i < c->n; i += c->stride) s += c->scale * x[i] * x[i];
  return s;
}
double l_nested(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) s += x[i] * x[j] / (1 + i + j);
  return s;
}
double l_triangular(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++)
    for (int j = i; j < n; j++) s += sin(x[i] - x[j]) + x[i] * x[j];
  return s;
}
double l_early_return(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    s += x[i] * x[i];
    if (s > 2.0) return s * 3.0;
  }
  return s;
}
double l_switch(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    switch (i % 4) {
      case 0: s += x[i]; break;
      case 1: s *= 1 + x[i] * x[i]; break;
      case 2: s -= sin(x[i]); break;
      default: s += x[i] * s;
    }
  }
  return s;
}
double l_converge(const double *x, int n) {
  /* Newton iteration for sqrt(a) with a data-dependent trip count */
  (void)n;
  double a = 1.0 + x[0] * x[0], r = a;
  int it = 0;
  while (fabs(r * r - a) > 1e-14 * a && it < 100) { r = 0.5 * (r + a / r); it++; }
  return r * x[1];
}
double l_strided(const double *x, int n) {
  double s = 0;
  for (int i = n - 1; i >= 0; i -= 2) s += x[i] * (i & 1 ? 2.0 : -1.0);
  for (int i = 1; i < n; i += 3) s *= 1 + 0.1 * x[i];
  return s;
}
double l_ptr(const double *x, int n) {
  double s = 0;
  for (const double *p = x, *e = x + n; p != e; ++p) s += *p * *p * *p;
  return s;
}
double l_recurrence(const double *x, int n) {
  /* a running state carried across iterations, overwritten each time */
  double a = x[0], b = x[1];
  for (int i = 2; i < n; i++) { double c = a * 0.5 + b * x[i]; a = b; b = tanh(c); }
  return a + 2 * b;
}
double l_long_loop(const double *x, int n) {
  double s = 0;
  for (long k = 0; k < 100000; k++) s += x[k % n] * 1e-5 * sin(x[(k + 1) % n] + k * 1e-4);
  return s;
}
double l_inner_dynamic(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    int m = (int)(fabs(x[i]) * 5) + 1;
    for (int j = 0; j < m; j++) s += x[i] * (j + 1) * 0.1 + s * 0.01;
  }
  return s;
}

typedef double (*fn)(const double *, int);
static fn CUR;
static double call_cur(const double *x) { return CUR(x, N); }
static void check(const char *name, fn f, double got[N], const double *x) {
  CUR = f;
  for (int i = 0; i < N; i++) {
    double xp[N], xm[N];
    for (int k = 0; k < N; k++) xp[k] = xm[k] = x[k];
    double h = hc_h(x[i]);
    xp[i] += h; xm[i] -= h;
    char buf[64];
    snprintf(buf, sizeof buf, "%s d[%d]", name, i);
    hc_near(buf, got[i], (call_cur(xp) - call_cur(xm)) / (2 * h), 1e-6);
  }
}
#define CHECK(f) do { double d[N] = {0}; \
    __enzyme_autodiff((void *)f, enzyme_dup, x, d, enzyme_const, N); check(#f, f, d, x); } while (0)

static struct cfg C = {N, 2, 1.5};
static double sb(const double *x, int n) { (void)n; return l_struct_bound(x, &C); }

int main(void) {
  double x[N];
  for (int i = 0; i < N; i++) x[i] = 0.9 * sin(1.3 * i + 0.4);
  CHECK(l_for); CHECK(l_while); CHECK(l_dowhile); CHECK(l_break); CHECK(l_continue);
  CHECK(l_sizet_down); CHECK(l_unsigned_wrap); CHECK(l_mem_bound); CHECK(l_nested);
  CHECK(l_triangular); CHECK(l_early_return); CHECK(l_switch); CHECK(l_converge);
  CHECK(l_strided); CHECK(l_ptr); CHECK(l_recurrence); CHECK(l_long_loop);
  CHECK(l_inner_dynamic);
  {
    double d[N] = {0};
    __enzyme_autodiff((void *)l_struct_bound, enzyme_dup, x, d, enzyme_const, &C);
    check("l_struct_bound", sb, d, x);
  }
  /* gradient accumulates: a second call adds the same again */
  {
    double d[N] = {0}, d1[N] = {0};
    __enzyme_autodiff((void *)l_nested, enzyme_dup, x, d1, enzyme_const, N);
    __enzyme_autodiff((void *)l_nested, enzyme_dup, x, d, enzyme_const, N);
    __enzyme_autodiff((void *)l_nested, enzyme_dup, x, d, enzyme_const, N);
    for (int i = 0; i < N; i++) hc_near("accumulate", d[i], 2 * d1[i], 1e-14);
  }
  return hc_done();
}
