/* Copies of float data that optimization turns into integer moves, struct copies with pointers. */
#include "adcheck.h"
#include <string.h>
void __enzyme_autodiff(void *, ...);
typedef struct { double a, b; } P;
typedef struct { double x; int tag; double *w; } Q;
__attribute__((noinline)) void copyp(P *d, const P *s, int n) { for (int i = 0; i < n; i++) d[i] = s[i]; }
__attribute__((noinline)) double usep(const P *s, int n) { P t[4]; copyp(t, s, n); double r = 0; for (int i = 0; i < n; i++) r += t[i].a * t[i].b; return r; }
__attribute__((noinline)) double swapper(double *x) { double t; memcpy(&t, x, 8); memcpy(x, x + 1, 8); memcpy(x + 1, &t, 8); return x[0] * 3 + x[1]; }
__attribute__((noinline)) double useq(Q *q) { Q c = *q; return c.x * c.w[0] * c.tag; }
int main(void) {
  P s[3] = {{1, 2}, {3, 4}, {5, 6}}, ds[3] = {{0}};
  __enzyme_autodiff((void *)usep, s, ds, 3);
  ac_near("a0", ds[0].a, 2, 1e-12); ac_near("b2", ds[2].b, 5, 1e-12);
  double x[2] = {1, 2}, dx[2] = {0};
  __enzyme_autodiff((void *)swapper, x, dx);
  ac_near("swap0", dx[0], 1, 1e-12); ac_near("swap1", dx[1], 3, 1e-12);
  double w = 2.0, dw = 0; Q q = {3.0, 2, &w}, dq = {0, 0, &dw};
  __enzyme_autodiff((void *)useq, &q, &dq);
  ac_near("q.x", dq.x, 4, 1e-12); ac_near("w", dw, 6, 1e-12);
  return ac_done();
}
