/* Small scientific applications differentiated end to end: Lennard-Jones energy with
 * periodic images (round), implicit heat equation (Thomas algorithm), softmax
 * cross-entropy with a max shift, adaptive-step RK45-like integration (data-dependent
 * step control), a bisection root solve inside the function. */
#include "hcheck.h"
#include <string.h>
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
enum { NP = 5, NX = 12, NC = 6 };

double lj_energy(const double *pos, int np) {
  const double L = 4.0;
  double e = 0;
  for (int i = 0; i < np; i++)
    for (int j = i + 1; j < np; j++) {
      double r2 = 0;
      for (int k = 0; k < 2; k++) {
        double d = pos[2 * i + k] - pos[2 * j + k];
        d -= L * round(d / L);
        r2 += d * d;
      }
      if (r2 > 2.5 * 2.5) continue;
      double ir6 = 1.0 / (r2 * r2 * r2);
      e += 4 * (ir6 * ir6 - ir6);
    }
  return e;
}
/* one implicit Euler step of u_t = k u_xx repeated, tridiagonal solve each step */
__attribute__((noinline)) static void thomas(const double *a, const double *b, const double *c, double *d, double *x, int n) {
  double cp[NX], dp[NX];
  cp[0] = c[0] / b[0]; dp[0] = d[0] / b[0];
  for (int i = 1; i < n; i++) {
    double m = b[i] - a[i] * cp[i - 1];
    cp[i] = c[i] / m;
    dp[i] = (d[i] - a[i] * dp[i - 1]) / m;
  }
  x[n - 1] = dp[n - 1];
  for (int i = n - 2; i >= 0; i--) x[i] = dp[i] - cp[i] * x[i + 1];
}
double heat(const double *u0, int n) {
  double a[NX], b[NX], c[NX], u[NX], rhs[NX];
  double k = 0.3 + 0.1 * u0[0] * u0[0]; /* diffusivity depends on the data too */
  for (int i = 0; i < n; i++) { a[i] = -k; b[i] = 1 + 2 * k; c[i] = -k; u[i] = u0[i]; }
  for (int s = 0; s < 5; s++) { memcpy(rhs, u, sizeof(double) * n); thomas(a, b, c, rhs, u, n); }
  double e = 0;
  for (int i = 0; i < n; i++) e += u[i] * u[i] * (i + 1);
  return e;
}
double xent(const double *logits, int n) {
  static const int label = 2;
  double m = logits[0];
  for (int i = 1; i < n; i++) if (logits[i] > m) m = logits[i];
  double z = 0;
  for (int i = 0; i < n; i++) z += exp(logits[i] - m);
  double lse = m + log(z);
  double reg = 0;
  for (int i = 0; i < n; i++) reg += 1e-2 * logits[i] * logits[i];
  return lse - logits[label] + reg;
}
static void rhs(const double *p, double t, const double *y, double *dy) {
  dy[0] = y[1];
  dy[1] = -p[0] * sin(y[0]) - p[1] * y[1] + 0.1 * cos(t);
}
double adaptive(const double *p, int n) {
  (void)n;
  double y[2] = {p[2], p[3]}, t = 0, h = 0.1;
  int steps = 0;
  while (t < 2.0 && steps < 1000) {
    if (t + h > 2.0) h = 2.0 - t;
    double k1[2], k2[2], tmp[2], yl[2], yh[2];
    rhs(p, t, y, k1);
    for (int i = 0; i < 2; i++) tmp[i] = y[i] + h * k1[i];
    rhs(p, t + h, tmp, k2);
    for (int i = 0; i < 2; i++) { yl[i] = y[i] + h * k1[i]; yh[i] = y[i] + 0.5 * h * (k1[i] + k2[i]); }
    double err = fabs(yh[0] - yl[0]) + fabs(yh[1] - yl[1]);
    if (err > 1e-4 && h > 1e-3) { h *= 0.5; continue; } /* reject */
    y[0] = yh[0]; y[1] = yh[1]; t += h; steps++;
    if (err < 1e-5) h *= 1.5;
  }
  return y[0] * y[0] + y[1];
}
double root_solve(const double *p, int n) {
  (void)n;
  /* x solves x^3 + p0 x - p1 = 0 by bisection, then Newton polish; result used actively */
  double lo = -10, hi = 10;
  for (int it = 0; it < 60; it++) {
    double mid = 0.5 * (lo + hi);
    if (mid * mid * mid + p[0] * mid - p[1] > 0) hi = mid; else lo = mid;
  }
  double x = 0.5 * (lo + hi);
  for (int it = 0; it < 3; it++) x -= (x * x * x + p[0] * x - p[1]) / (3 * x * x + p[0]);
  return x * p[2];
}

static void check(const char *name, double (*f)(const double *, int), const double *x, int len, int n, const double *got, double tol) {
  for (int i = 0; i < len; i++) {
    double xp[NX], xm[NX], h = hc_h(x[i]);
    memcpy(xp, x, sizeof(double) * len); memcpy(xm, x, sizeof(double) * len);
    xp[i] += h; xm[i] -= h;
    char buf[64];
    snprintf(buf, sizeof buf, "%s d[%d]", name, i);
    hc_near(buf, got[i], (f(xp, n) - f(xm, n)) / (2 * h), tol);
  }
}

int main(void) {
  double pos[2 * NP] = {0.1, 0.2, 1.3, 0.1, 0.4, 1.5, 3.7, 3.6, 2.2, 2.8}, dpos[2 * NP] = {0};
  __enzyme_autodiff((void *)lj_energy, enzyme_dup, pos, dpos, enzyme_const, NP);
  check("lj", lj_energy, pos, 2 * NP, NP, dpos, 1e-5);
  double u0[NX], du0[NX] = {0};
  for (int i = 0; i < NX; i++) u0[i] = sin(0.5 * i) + 0.2;
  __enzyme_autodiff((void *)heat, enzyme_dup, u0, du0, enzyme_const, NX);
  check("heat", heat, u0, NX, NX, du0, 1e-6);
  double lg[NC] = {0.2, -1.0, 0.5, 2.0, 0.1, -0.3}, dlg[NC] = {0};
  __enzyme_autodiff((void *)xent, enzyme_dup, lg, dlg, enzyme_const, NC);
  check("xent", xent, lg, NC, NC, dlg, 1e-6);
  double p[4] = {2.0, 0.3, 0.8, 0.0}, dp[4] = {0};
  __enzyme_autodiff((void *)adaptive, enzyme_dup, p, dp, enzyme_const, 4);
  /* piecewise smooth: an accepted/rejected step flips somewhere near p for some libm bits,
   * and a central difference across the jump is meaningless. Each entry must match the
   * one-sided difference on a side without a jump (either side), and forward mode. */
  for (int i = 0; i < 3; i++) {
    double xp[4], xm[4], e[4] = {0}, h = 1e-7;
    memcpy(xp, p, sizeof xp); memcpy(xm, p, sizeof xm);
    xp[i] += h; xm[i] -= h;
    double f0 = adaptive(p, 4), right = (adaptive(xp, 4) - f0) / h, left = (f0 - adaptive(xm, 4)) / h;
    double near = fabs(dp[i] - right) < fabs(dp[i] - left) ? right : left;
    char buf[64];
    snprintf(buf, sizeof buf, "adaptive d[%d] vs one-sided", i);
    hc_near(buf, dp[i], near, 1e-4);
    e[i] = 1;
    snprintf(buf, sizeof buf, "adaptive d[%d] vs forward", i);
    hc_near(buf, dp[i], __enzyme_fwddiff((void *)adaptive, enzyme_dup, p, e, enzyme_const, 4), 1e-10);
  }
  double q[3] = {1.5, 2.0, 0.7}, dq[3] = {0};
  __enzyme_autodiff((void *)root_solve, enzyme_dup, q, dq, enzyme_const, 3);
  double x = root_solve(q, 3) / q[2];
  hc_near("root dp0", dq[0], -x / (3 * x * x + q[0]) * q[2], 1e-9);
  hc_near("root dp1", dq[1], 1 / (3 * x * x + q[0]) * q[2], 1e-9);
  hc_near("root dp2", dq[2], x, 1e-12);
  return hc_done();
}
