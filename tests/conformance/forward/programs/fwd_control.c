/* Forward mode through pointer selection (shadow pointers chosen by active comparisons),
 * restrict, const/always_inline attributes, builtins, goto loops, switch fallthrough, and a
 * linked list with a shadow list. */
#include <stdarg.h>
#include "hcheck.h"
extern int enzyme_dup, enzyme_const, enzyme_width;
double __enzyme_fwddiff(void *, ...);
typedef struct { double a, b; } d2;
d2 __enzyme_fwddiff2(void *, ...);
__attribute__((const)) static double sq(double v) { return v * v; }
__attribute__((always_inline)) static inline double cubic(double v) { return v * sq(v); }
/* variadic logging of active values, silent unless verbose */
static int verbose;
__attribute__((noinline)) static void log_msg(const char *fmt, ...) {
  if (!verbose) return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
}

double pick(double *restrict x, int n) {
  double *p = x[0] > x[1] ? &x[0] : &x[1];
  double *q = &x[0];
  for (int i = 1; i < n; i++) if (x[i] < *q) q = &x[i];
  if (__builtin_expect(n > 50, 0)) __builtin_unreachable();
  double r = *p * 2.0 + cubic(*q) + __builtin_fabs(x[2]);
  log_msg("pick: p=%g q=%g r=%g n=%d\n", *p, *q, r, n);
  int i = 0;
again:
  r += sq(x[i]) * 0.1;
  if (++i < n) goto again;
  switch (n) {
    case 4: r += x[3];
    /* fallthrough */
    case 3: r += x[2] * x[2]; break;
    default: r -= 1;
  }
  return r;
}
typedef struct node { double v; struct node *next; } node;
double list_sum(node *h) { double s = 0; for (; h; h = h->next) s += sin(h->v) * h->v; return s; }
int main(void) {
  double x[4] = {0.3, 0.9, -1.2, -0.4}, dx[4] = {1, 2, 3, 4}, h = 1e-6, xp[4], xm[4];
  for (int i = 0; i < 4; i++) { xp[i] = x[i] + h * dx[i]; xm[i] = x[i] - h * dx[i]; }
  double fd = (pick(xp, 4) - pick(xm, 4)) / (2 * h);
  hc_near("pick", __enzyme_fwddiff((void *)pick, enzyme_dup, x, dx, enzyme_const, 4), fd, 1e-6);
  double e1[4] = {0, 1, 0, 0};
  d2 r = __enzyme_fwddiff2((void *)pick, enzyme_width, 2, enzyme_dup, x, dx, e1, enzyme_const, 4);
  hc_near("pick lane 0", r.a, fd, 1e-6);
  hc_near("pick lane 1", r.b, 2.0 + 0.2 * x[1], 1e-12);
  double fd3 = 0;
  for (int i = 0; i < 3; i++) { xp[i] = x[i] + h * dx[i]; xm[i] = x[i] - h * dx[i]; }
  fd3 = (pick(xp, 3) - pick(xm, 3)) / (2 * h);
  hc_near("pick n=3", __enzyme_fwddiff((void *)pick, enzyme_dup, x, dx, enzyme_const, 3), fd3, 1e-6);
  node n3 = {0.5, 0}, n2 = {-0.3, &n3}, n1 = {1.2, &n2};
  node d3 = {1, 0}, d2n = {-1, &d3}, d1 = {0.5, &d2n};
  double want = 0;
  for (node *p = &n1, *q = &d1; p; p = p->next, q = q->next) want += (cos(p->v) * p->v + sin(p->v)) * q->v;
  hc_near("linked list", __enzyme_fwddiff((void *)list_sum, &n1, &d1), want, 1e-12);
  return hc_done();
}
