/* Corners: globals read as parameters, a float time-stepping IV, in-place update of a
 * dup input, the same array passed twice, Kahan sums, recursion 20000 deep, n = 0,
 * a pointer walking backwards. */
#include "hcheck.h"
#include <string.h>
extern int enzyme_dup, enzyme_const, enzyme_dupnoneed;
double __enzyme_autodiff(void *, ...);
double P[4];
double params(const double *x, int n) { double s = 0; for (int i = 0; i < n; i++) s += P[i] * x[i] * x[i]; return s; }
double ftime(const double *x, int n) { (void)n; double y = x[0], v = x[1]; for (double t = 0; t < 1.0; t += 0.01) { double a = -x[2] * y - 0.1 * v; v += 0.01 * a; y += 0.01 * v; } return y * y + v; }
void inplace(double *x, int n) { double s = 0; for (int i = 0; i < n; i++) s += x[i] * x[i]; s = sqrt(s); for (int i = 0; i < n; i++) x[i] = x[i] / s + sin(x[i]); }
double alias2(const double *a, const double *b, int n) { double s = 0; for (int i = 0; i < n; i++) s += a[i] * b[(i + 1) % n]; return s; }
double kahan(const double *x, int n) { double s = 0, c = 0; for (int i = 0; i < n; i++) { double y = x[i] * x[i] - c; double t = s + y; c = (t - s) - y; s = t; } return s; }
double deep(double x, int k) { return k == 0 ? x : sin(deep(x, k - 1)) * 0.999 + 0.001 * x; }
double empty(const double *x, int n) { double s = 1.0; for (int i = 0; i < n; i++) s *= x[i]; return s; }
double backwards(const double *x, int n) { double s = 0; const double *p = x + n - 1; while (p >= x) { s = s * 0.9 + *p * *p; p--; } return s; }
int main(void) {
  enum { N = 4 };
  double x[N] = {0.7, -0.3, 2.0, 0.5}, d[N] = {0};
  for (int i = 0; i < N; i++) P[i] = 1.0 + i;
  __enzyme_autodiff((void *)params, enzyme_dup, x, d, enzyme_const, N);
  for (int i = 0; i < N; i++) hc_near("params", d[i], 2 * P[i] * x[i], 1e-12);
  double d2[N] = {0};
  __enzyme_autodiff((void *)ftime, enzyme_dup, x, d2, enzyme_const, N);
  for (int i = 0; i < 3; i++) { double xp[N], xm[N], h = 1e-6; memcpy(xp, x, sizeof xp); memcpy(xm, x, sizeof xm); xp[i] += h; xm[i] -= h; hc_near("ftime", d2[i], (ftime(xp, N) - ftime(xm, N)) / (2 * h), 1e-6); }
  {
    double v[N], dv[N], v0[N];
    for (int i = 0; i < N; i++) { v0[i] = v[i] = x[i]; dv[i] = 1.0 + i; }
    __enzyme_autodiff((void *)inplace, enzyme_dup, v, dv, enzyme_const, N);
    for (int i = 0; i < N; i++) { double vp[N], vm[N], h = 1e-6; memcpy(vp, v0, sizeof vp); memcpy(vm, v0, sizeof vm); vp[i] += h; vm[i] -= h; inplace(vp, N); inplace(vm, N); double fd = 0; for (int k = 0; k < N; k++) fd += (1.0 + k) * (vp[k] - vm[k]) / (2 * h); hc_near("inplace", dv[i], fd, 1e-6); }
  }
  {
    double da[N] = {0};
    __enzyme_autodiff((void *)alias2, enzyme_dup, x, da, enzyme_dup, x, da, enzyme_const, N);
    for (int i = 0; i < N; i++) hc_near("aliased", da[i], x[(i + 1) % N] + x[(i + N - 1) % N], 1e-12);
  }
  double d3[N] = {0};
  __enzyme_autodiff((void *)kahan, enzyme_dup, x, d3, enzyme_const, N);
  for (int i = 0; i < N; i++) hc_near("kahan", d3[i], 2 * x[i], 1e-9);
  double g = __enzyme_autodiff((void *)deep, 0.5, enzyme_const, 20000);
  double h = 1e-6;
  hc_near("deep recursion", g, (deep(0.5 + h, 20000) - deep(0.5 - h, 20000)) / (2 * h), 1e-5);
  double d4[N] = {0};
  __enzyme_autodiff((void *)empty, enzyme_dup, x, d4, enzyme_const, 0);
  for (int i = 0; i < N; i++) hc_near("empty", d4[i], 0, 0);
  double d5[N] = {0};
  __enzyme_autodiff((void *)backwards, enzyme_dup, x, d5, enzyme_const, N);
  for (int i = 0; i < N; i++) hc_near("backwards", d5[i], 2 * x[i] * pow(0.9, i), 1e-12);
  return hc_done();
}
