/* Split mode with shadow globals, a callee active at one site and inactive at another,
 * and an int return with outputs through memory. */
#include "hcheck.h"
#include <string.h>
extern int enzyme_dup, enzyme_const, enzyme_dupnoneed;
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);
enum { N = 5 };
double g_cache[N];
static const double W[N] = {1, -1, 2, 0.5, -0.25};
__attribute__((noinline)) static double wdot(const double *a, const double *b, int n) { double s = 0; for (int i = 0; i < n; i++) s += a[i] * b[i]; return s; }
double cached(const double *x, int n) {
  for (int i = 0; i < n; i++) g_cache[i] = x[i] * x[i];
  return wdot(g_cache, x, n) + wdot(W, W, n) * wdot(W, x, n);
}
int count_pos(const double *x, double *y, int n) {
  int c = 0;
  for (int i = 0; i < n; i++) { y[i] = x[i] > 0 ? x[i] * x[i] : -x[i]; c += x[i] > 0; }
  return c;
}
int main(void) {
  double x[N] = {0.3, -0.7, 1.1, 0.2, -0.4}, dx[N] = {0};
  void *t = __enzyme_augmentfwd((void *)cached, enzyme_dup, x, dx, enzyme_const, N);
  double other[N], dother[N] = {0};
  for (int i = 0; i < N; i++) other[i] = 2 * x[i];
  void *t2 = __enzyme_augmentfwd((void *)cached, enzyme_dup, other, dother, enzyme_const, N); /* overwrites g_cache */
  __enzyme_reverse((void *)cached, enzyme_dup, x, dx, enzyme_const, N, 1.0, t);
  __enzyme_reverse((void *)cached, enzyme_dup, other, dother, enzyme_const, N, 1.0, t2);
  double ww = 0; for (int i = 0; i < N; i++) ww += W[i] * W[i];
  for (int i = 0; i < N; i++) {
    hc_near("global cache dx", dx[i], 3 * x[i] * x[i] + ww * W[i], 1e-12);
    hc_near("global cache dother", dother[i], 3 * other[i] * other[i] + ww * W[i], 1e-12);
  }
  double y[N], dy[N] = {0}, dx2[N] = {0};
  void *t3 = __enzyme_augmentfwd((void *)count_pos, enzyme_dup, x, dx2, enzyme_dup, y, dy, enzyme_const, N);
  for (int i = 0; i < N; i++) dy[i] = 1.0;
  __enzyme_reverse((void *)count_pos, enzyme_dup, x, dx2, enzyme_dup, y, dy, enzyme_const, N, t3);
  for (int i = 0; i < N; i++) {
    hc_near("int return dx", dx2[i], x[i] > 0 ? 2 * x[i] : -1.0, 1e-12);
    hc_near("int return primal y", y[i], x[i] > 0 ? x[i] * x[i] : -x[i], 1e-15);
  }
  return hc_done();
}
