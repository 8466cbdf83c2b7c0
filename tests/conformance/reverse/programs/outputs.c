/* Outputs read back by the function itself: dupnoneed on a buffer the function reads
 * after writing, and an input-output accumulator y += A x (y's initial values matter). */
#include "hcheck.h"
#include <string.h>
extern int enzyme_dup, enzyme_const, enzyme_dupnoneed;
double __enzyme_autodiff(void *, ...);
enum { N = 5 };
void chain(const double *x, double *y, int n) {
  for (int i = 0; i < n; i++) y[i] = x[i] * x[i];
  for (int i = 1; i < n; i++) y[i] += y[i - 1] * x[i];
}
void accum(const double *x, double *y, int n) {
  for (int i = 0; i < n; i++) y[i] = y[i] * y[i] + sin(x[i]) * y[(i + 1) % n];
}
int main(void) {
  double x[N] = {0.3, -0.5, 0.8, 0.1, -0.9}, w[N] = {1, 2, 3, 4, 5};
  for (int mode = 0; mode < 2; mode++) {
    double dx[N] = {0}, y[N], dy[N];
    memcpy(dy, w, sizeof dy);
    if (mode) __enzyme_autodiff((void *)chain, enzyme_dup, x, dx, enzyme_dupnoneed, y, dy, enzyme_const, N);
    else __enzyme_autodiff((void *)chain, enzyme_dup, x, dx, enzyme_dup, y, dy, enzyme_const, N);
    for (int i = 0; i < N; i++) {
      double xp[N], xm[N], yp[N], ym[N], h = hc_h(x[i]);
      memcpy(xp, x, sizeof xp); memcpy(xm, x, sizeof xm);
      xp[i] += h; xm[i] -= h;
      chain(xp, yp, N); chain(xm, ym, N);
      double fd = 0;
      for (int k = 0; k < N; k++) fd += w[k] * (yp[k] - ym[k]) / (2 * h);
      hc_near(mode ? "chain dupnoneed" : "chain dup", dx[i], fd, 1e-6);
      hc_near("dy consumed", dy[i], 0, 0);
    }
  }
  {
    double y0[N] = {0.5, -0.2, 0.7, 0.3, 0.1}, y[N], dy[N], dx[N] = {0};
    memcpy(y, y0, sizeof y);
    memcpy(dy, w, sizeof dy);
    __enzyme_autodiff((void *)accum, enzyme_dup, x, dx, enzyme_dup, y, dy, enzyme_const, N);
    double ref[N];
    memcpy(ref, y0, sizeof ref); accum(x, ref, N);
    for (int i = 0; i < N; i++) hc_near("accum primal", y[i], ref[i], 1e-15);
    for (int i = 0; i < N; i++) {
      /* d/dy0[i] and d/dx[i] of sum w .* accum(x, y0) */
      double a[N], b[N], h = hc_h(y0[i]);
      memcpy(a, y0, sizeof a); memcpy(b, y0, sizeof b);
      a[i] += h; b[i] -= h;
      accum(x, a, N); accum(x, b, N);
      double fd = 0;
      for (int k = 0; k < N; k++) fd += w[k] * (a[k] - b[k]) / (2 * h);
      hc_near("accum dy0", dy[i], fd, 1e-6);
      double xp[N], xm[N];
      memcpy(xp, x, sizeof xp); memcpy(xm, x, sizeof xm);
      h = hc_h(x[i]); xp[i] += h; xm[i] -= h;
      memcpy(a, y0, sizeof a); memcpy(b, y0, sizeof b);
      accum(xp, a, N); accum(xm, b, N);
      fd = 0;
      for (int k = 0; k < N; k++) fd += w[k] * (a[k] - b[k]) / (2 * h);
      hc_near("accum dx", dx[i], fd, 1e-6);
    }
  }
  return hc_done();
}
