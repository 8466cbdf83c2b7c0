/* realloc: a buffer grown while it holds active values, combined and split mode. */
#include "adcheck.h"
#include <string.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);
/* grows a buffer with realloc while accumulating products, then reduces it */
__attribute__((noinline)) double grow(const double *x, int n) {
  int cap = 2, len = 0;
  double *buf = malloc(cap * sizeof(double));
  for (int i = 0; i < n; i++) {
    if (len == cap) { cap *= 2; buf = realloc(buf, cap * sizeof(double)); }
    buf[len++] = x[i] * x[(i + 1) % n];
  }
  double s = 0;
  for (int i = 0; i < len; i++) s += buf[i] * (i + 1);
  free(buf);
  return s;
}
static double grow_f(const double *x, int n) { return grow(x, n); }
int main(void) {
  double x[9], dx[9] = {0}, g[9];
  for (int i = 0; i < 9; i++) x[i] = 0.2 + 0.1 * i;
  __enzyme_autodiff((void *)grow, x, dx, 9);
  for (int i = 0; i < 9; i++) { double s = x[i], h = 1e-6; x[i] = s + h; double a = grow_f(x, 9); x[i] = s - h; double b = grow_f(x, 9); x[i] = s; g[i] = (a - b) / (2 * h); }
  for (int i = 0; i < 9; i++) ac_near("realloc", dx[i], g[i], 1e-6);
  double dx2[9] = {0};
  void *t = __enzyme_augmentfwd((void *)grow, x, dx2, 9);
  __enzyme_reverse((void *)grow, x, dx2, 9, 1.0, t);
  for (int i = 0; i < 9; i++) ac_near("realloc split", dx2[i], g[i], 1e-6);
  return ac_done();
}
