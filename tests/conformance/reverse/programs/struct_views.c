/* Structs holding pointers to active data, copied by assignment and memcpy, passed by
 * value to noinline helpers that write through them. */
#include "hcheck.h"
#include <string.h>
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
struct view { double *p; int n; double scale; };
__attribute__((noinline)) static void fill(struct view v, const double *x) { for (int i = 0; i < v.n; i++) v.p[i] = x[i] * x[i] * v.scale; }
__attribute__((noinline)) static double total(const struct view *v) { double s = 0; for (int i = 0; i < v->n; i++) s += v->p[i] * v->p[(i + 1) % v->n]; return s; }
double f(const double *x, int n) {
  double buf[8];
  struct view a = {buf, n, 2.0}, b, c;
  b = a;
  memcpy(&c, &b, sizeof c);
  fill(c, x);
  return total(&b);
}
int main(void) {
  enum { N = 4 };
  double x[N] = {0.5, -1.5, 1.0, 0.25}, d[N] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, d, enzyme_const, N);
  for (int i = 0; i < N; i++) {
    double xp[N], xm[N], h = hc_h(x[i]);
    memcpy(xp, x, sizeof xp); memcpy(xm, x, sizeof xm);
    xp[i] += h; xm[i] -= h;
    hc_near("d", d[i], (f(xp, N) - f(xm, N)) / (2 * h), 1e-6);
  }
  return hc_done();
}
