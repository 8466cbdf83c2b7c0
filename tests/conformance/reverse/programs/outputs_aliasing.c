/* Outputs reset with memset, written twice, and an out-of-place routine called in place
 * (input and output are the same array). */
#include "hcheck.h"
#include <string.h>
extern int enzyme_dup, enzyme_const, enzyme_dupnoneed;
double __enzyme_autodiff(void *, ...);
enum { N = 4 };
void accum_reset(const double *x, double *y, int n) {
  memset(y, 0, n * sizeof *y);
  for (int r = 0; r < 2; r++) for (int i = 0; i < n; i++) y[i] += x[i] * x[(i + r) % n];
}
void write_twice(const double *x, double *y, int n) {
  for (int i = 0; i < n; i++) y[i] = x[i] * 100;
  for (int i = 0; i < n; i++) y[i] = sin(x[i]);
}
void smooth(const double *in, double *out, int n) {
  double prev = in[n - 1];
  for (int i = 0; i < n; i++) { double cur = in[i]; out[i] = 0.5 * cur + 0.5 * prev * prev; prev = cur; }
}
static void smooth_inplace_ref(double *v, int n) { double t[N]; smooth(v, t, n); memcpy(v, t, sizeof t); }
int main(void) {
  double x[N] = {0.5, -1.5, 1.0, 0.25}, w[N] = {1, 2, 3, 4};
  {
    double y[N] = {9, 9, 9, 9}, dy[N], dx[N] = {0};
    memcpy(dy, w, sizeof dy);
    __enzyme_autodiff((void *)accum_reset, enzyme_dup, x, dx, enzyme_dup, y, dy, enzyme_const, N);
    for (int i = 0; i < N; i++) {
      double want = w[i] * 2 * x[i] + w[i] * x[(i + 1) % N] + w[(i + N - 1) % N] * x[(i + N - 1) % N];
      hc_near("memset output dx", dx[i], want, 1e-12);
      hc_near("memset output dy consumed", dy[i], 0, 0);
    }
  }
  {
    double y[N], dy[N], dx[N] = {0};
    memcpy(dy, w, sizeof dy);
    __enzyme_autodiff((void *)write_twice, enzyme_dup, x, dx, enzyme_dupnoneed, y, dy, enzyme_const, N);
    for (int i = 0; i < N; i++) hc_near("written twice", dx[i], w[i] * cos(x[i]), 1e-12);
  }
  {
    double v[N], dv[N], v0[N];
    memcpy(v, x, sizeof v); memcpy(v0, x, sizeof v0); memcpy(dv, w, sizeof dv);
    __enzyme_autodiff((void *)smooth, enzyme_dup, v, dv, enzyme_dup, v, dv, enzyme_const, N);
    double ref[N];
    memcpy(ref, v0, sizeof ref); smooth_inplace_ref(ref, N);
    for (int i = 0; i < N; i++) hc_near("in place primal", v[i], ref[i], 1e-15);
    for (int i = 0; i < N; i++) {
      double a[N], b[N], h = hc_h(v0[i]);
      memcpy(a, v0, sizeof a); memcpy(b, v0, sizeof b);
      a[i] += h; b[i] -= h;
      smooth_inplace_ref(a, N); smooth_inplace_ref(b, N);
      double fd = 0;
      for (int k = 0; k < N; k++) fd += w[k] * (a[k] - b[k]) / (2 * h);
      hc_near("in place gradient", dv[i], fd, 1e-6);
    }
  }
  return hc_done();
}
