/* Second derivatives by nesting AD calls: forward over forward, forward over reverse, reverse
 * over forward, and a Hessian-vector product (forward over a reverse-mode gradient). */
#include "hcheck.h"
extern int enzyme_dup, enzyme_const;
double __enzyme_fwddiff(void *, ...);
double __enzyme_autodiff(void *, ...);
void __enzyme_autodiffv(void *, ...);
void __enzyme_fwddiffv(void *, ...);

double f(double x) { return sin(x) * x * x; }
double df(double x) { return __enzyme_fwddiff((void *)f, x, 1.0); }
double df_rev(double x) { return __enzyme_autodiff((void *)f, x); }

/* g = x0^2 x1 + x1^2 x2 + x2^2 x0 */
double g(const double *x, int n) { double s = 0; for (int i = 0; i < n; i++) s += x[i] * x[i] * x[(i + 1) % n]; return s; }
void grad_g(const double *x, double *gx, int n) {
  for (int i = 0; i < n; i++) gx[i] = 0;
  __enzyme_autodiffv((void *)g, enzyme_dup, x, gx, enzyme_const, n);
}

/* two Hessian columns in one width-2 sweep (no heap workspace) */
extern int enzyme_width;
double E2(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) { double t = sin(x[i]) * x[(i + 1) % n]; s += t * t; }
  return s;
}
void grad_E2(const double *x, double *g, int n) {
  for (int i = 0; i < n; i++) g[i] = 0;
  __enzyme_autodiffv((void *)E2, enzyme_dup, x, g, enzyme_const, n);
}

/* reverse over reverse: mixed partials of a two-argument function */
typedef struct { double dx, dy; } pair;
pair __enzyme_autodiff2(void *, ...);
double f2(double x, double y) { return sin(x * y) + x * x * y; }
double df2dx(double x, double y) { pair r = __enzyme_autodiff2((void *)f2, x, y); return r.dx; }

int main(void) {
  double x = 0.7;
  double want2 = -sin(x) * x * x + 4 * x * cos(x) + 2 * sin(x);
  hc_near("forward over forward", __enzyme_fwddiff((void *)df, x, 1.0), want2, 1e-12);
  hc_near("forward over reverse", __enzyme_fwddiff((void *)df_rev, x, 1.0), want2, 1e-12);
  hc_near("reverse over forward", __enzyme_autodiff((void *)df, x), want2, 1e-12);
  double xs[3] = {0.5, -1.0, 2.0}, v[3] = {1, 0, 0}, gx[3], hv[3] = {0};
  __enzyme_fwddiffv((void *)grad_g, enzyme_dup, xs, v, enzyme_dup, gx, hv, enzyme_const, 3);
  hc_near("hvp 0", hv[0], 2 * xs[1], 1e-12);
  hc_near("hvp 1", hv[1], 2 * xs[0], 1e-12);
  hc_near("hvp 2", hv[2], 2 * xs[2], 1e-12);
  hc_near("gradient alongside", gx[0], 2 * xs[0] * xs[1] + xs[2] * xs[2], 1e-12);
  double y[2] = {0.3, -0.5}, gy[2], e0[2] = {1, 0}, e1[2] = {0, 1}, c0[2] = {0, 0}, c1[2] = {0, 0}, h = 1e-5;
  __enzyme_fwddiffv((void *)grad_E2, enzyme_width, 2, enzyme_dup, y, e0, e1, enzyme_dup, gy, c0, c1, enzyme_const, 2);
  for (int k = 0; k < 2; k++) {
    double yp[2], ym[2], gp[2], gm[2], *c = k ? c1 : c0;
    for (int i = 0; i < 2; i++) { yp[i] = y[i] + h * (i == k); ym[i] = y[i] - h * (i == k); }
    grad_E2(yp, gp, 2); grad_E2(ym, gm, 2);
    for (int i = 0; i < 2; i++) hc_near("hessian column (width 2)", c[i], (gp[i] - gm[i]) / (2 * h), 1e-6);
  }
  double px = 0.4, py = 0.9;
  pair rr = __enzyme_autodiff2((void *)df2dx, px, py);
  hc_near("reverse over reverse xx", rr.dx, -py * py * sin(px * py) + 2 * py, 1e-12);
  hc_near("reverse over reverse xy", rr.dy, cos(px * py) - px * py * sin(px * py) + 2 * px, 1e-12);
  hc_near("forward over reverse xy", __enzyme_fwddiff((void *)df2dx, px, 0.0, py, 1.0),
          cos(px * py) - px * py * sin(px * py) + 2 * px, 1e-12);
  return hc_done();
}
