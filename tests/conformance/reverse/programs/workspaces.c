/* Workspace allocators that work: aligned_alloc and a bump arena handing out double
 * slices of a malloc'd char buffer. */
#include "hcheck.h"
#include <string.h>
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
enum { N = 6 };
double f_aligned_alloc(const double *x, int n) {
  double *w = aligned_alloc(64, 64 * ((n * sizeof(double) + 63) / 64));
  for (int i = 0; i < n; i++) w[i] = sin(x[i]);
  double s = 0;
  for (int i = 0; i < n; i++) s += w[i] * w[(i + 2) % n];
  free(w);
  return s;
}
struct arena { char *base; size_t used, cap; };
static double *take(struct arena *a, int n) {
  double *p = (double *)(a->base + a->used);
  a->used += n * sizeof(double);
  return p;
}
double f_arena(const double *x, int n) {
  struct arena a = {malloc(4 * n * sizeof(double)), 0, 4 * n * sizeof(double)};
  double *u = take(&a, n), *v = take(&a, n);
  for (int i = 0; i < n; i++) { u[i] = x[i] * 3; v[i] = u[i] * x[i]; }
  double s = 0;
  for (int i = 0; i < n; i++) s += u[i] * v[(i + 1) % n];
  free(a.base);
  return s;
}
static void check(const char *name, double (*f)(const double *, int), const double *x, const double *got) {
  for (int i = 0; i < N; i++) {
    double xp[N], xm[N], h = hc_h(x[i]);
    memcpy(xp, x, sizeof xp); memcpy(xm, x, sizeof xm);
    xp[i] += h; xm[i] -= h;
    hc_near(name, got[i], (f(xp, N) - f(xm, N)) / (2 * h), 1e-6);
  }
}
#define CHECK(f) do { double d[N] = {0}; __enzyme_autodiff((void *)f, enzyme_dup, x, d, enzyme_const, N); check(#f, f, x, d); } while (0)
int main(void) {
  double x[N] = {0.3, -0.5, 0.8, 0.1, -0.9, 0.45};
  CHECK(f_aligned_alloc); CHECK(f_arena);
  return hc_done();
}
