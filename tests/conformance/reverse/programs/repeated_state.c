/* Repeated gradients of functions that keep state in globals and static locals: every
 * call must give the same gradient (shadow globals must not carry adjoints over). */
#include "hcheck.h"
#include <string.h>
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);
enum { N = 4 };
double g_state[N];
double g_sum;
double f(const double *x, int n) {
  for (int i = 0; i < n; i++) g_state[i] = x[i] * x[i];
  g_sum = 0;
  for (int i = 0; i < n; i++) g_sum += g_state[i] * x[(i + 1) % n];
  return g_sum;
}
double g(const double *x, int n) {
  static double hist[N];
  double s = 0;
  for (int i = 0; i < n; i++) { hist[i] = sin(x[i]); s += hist[i] * hist[(i + 1) % n]; }
  return s;
}
/* reads the global a previous call left behind, without writing it first */
double h_reads_stale(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += x[i] * g_state[i];
  return s;
}
int main(void) {
  double x[N] = {0.5, -1.5, 1.0, 0.25}, first[N], firstg[N];
  for (int rep = 0; rep < 4; rep++) {
    double d[N] = {0}, dg[N] = {0};
    if (rep % 2) {
      __enzyme_autodiff((void *)f, enzyme_dup, x, d, enzyme_const, N);
      __enzyme_autodiff((void *)g, enzyme_dup, x, dg, enzyme_const, N);
    } else {
      void *t = __enzyme_augmentfwd((void *)f, enzyme_dup, x, d, enzyme_const, N);
      void *tg = __enzyme_augmentfwd((void *)g, enzyme_dup, x, dg, enzyme_const, N);
      __enzyme_reverse((void *)g, enzyme_dup, x, dg, enzyme_const, N, 1.0, tg);
      __enzyme_reverse((void *)f, enzyme_dup, x, d, enzyme_const, N, 1.0, t);
    }
    if (rep == 0) memcpy(first, d, sizeof d);
    if (rep == 1) memcpy(firstg, dg, sizeof dg);
    for (int i = 0; i < N; i++) {
      double want = 2 * x[i] * x[(i + 1) % N] + x[(i + N - 1) % N] * x[(i + N - 1) % N];
      hc_near("global state", d[i], want, 1e-12);
      hc_near("repeatable", d[i], first[i], 0);
      /* hist[i + 1] is read before this call writes it: the previous call's value
       * (zero on the first call), a constant here; hist[0] read at i = n - 1 is fresh */
      double old_next = (rep == 0 || i == N - 1) ? 0.0 : sin(x[i + 1]);
      double wg = cos(x[i]) * old_next;
      if (i == 0) wg += cos(x[0]) * sin(x[N - 1]);
      if (i == N - 1) wg += cos(x[N - 1]) * sin(x[0]);
      hc_near("static local", dg[i], wg, 1e-12);
      if (rep > 0) hc_near("repeatable static", dg[i], firstg[i], 0);
    }
  }
  double dh[N] = {0};
  __enzyme_autodiff((void *)h_reads_stale, enzyme_dup, x, dh, enzyme_const, N);
  for (int i = 0; i < N; i++) hc_near("stale global read", dh[i], x[i] * x[i], 1e-12);
  return hc_done();
}
