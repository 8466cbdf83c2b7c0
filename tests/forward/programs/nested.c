/* Nested AD, innermost first: second derivatives by forward over forward, forward over
 * reverse and reverse over forward, and Hessian-vector products (forward over a gradient
 * with a loop), checked against closed forms and central differences of the gradient. */
#include "fwdcheck.h"
double __enzyme_fwddiff(void *, ...);
double __enzyme_autodiff(void *, ...);
void __enzyme_autodiffv(void *, ...);
void __enzyme_fwddiffv(void *, ...);

double f(double x) { return sin(x) * x * x; }
double df(double x) { return __enzyme_fwddiff((void *)f, x, 1.0); }
double df_rev(double x) { return __enzyme_autodiff((void *)f, x); }

/* g = sum x_i^2 x_{i+1} exp(0.1 x_i) over a ring */
double g(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += x[i] * x[i] * x[(i + 1) % n] * exp(0.1 * x[i]);
  return s;
}
void grad_g(const double *x, double *gx, int n) {
  for (int i = 0; i < n; i++) gx[i] = 0;
  __enzyme_autodiffv((void *)g, enzyme_dup, x, gx, enzyme_const, n);
}

/* a heap workspace: the reverse pass's shadow block of t carries tangents in the outer pass */
double E(const double *x, int n) {
  double *t = malloc(n * sizeof *t), s = 0;
  for (int i = 0; i < n; i++) t[i] = sin(x[i]) * x[(i + 1) % n];
  for (int i = 0; i < n; i++) s += t[i] * t[i] + exp(0.1 * x[i] * x[i]);
  free(t);
  return s;
}
void grad_E(const double *x, double *gx, int n) {
  for (int i = 0; i < n; i++) gx[i] = 0;
  __enzyme_autodiffv((void *)E, enzyme_dup, x, gx, enzyme_const, n);
}

#define N 4
static void hessian_columns_with_workspace(void) {
  double x[N] = {0.3, -0.5, 0.8, 1.1}, g[N], dg[2][N] = {{0}}, h = 1e-6;
  double e[2][N] = {{1, 0, 0, 0}, {0.5, 1, 0, -1}};
  __enzyme_fwddiffv((void *)grad_E, enzyme_width, 2, enzyme_dup, x, e[0], e[1],
                    enzyme_dupnoneed, g, dg[0], dg[1], enzyme_const, N);
  for (int k = 0; k < 2; k++) {
    double xp[N], xm[N], gp[N], gm[N];
    for (int i = 0; i < N; i++) { xp[i] = x[i] + h * e[k][i]; xm[i] = x[i] - h * e[k][i]; }
    grad_E(xp, gp, N);
    grad_E(xm, gm, N);
    for (int i = 0; i < N; i++) fc_near("Hessian column with a workspace", dg[k][i], (gp[i] - gm[i]) / (2 * h), 1e-6);
  }
  /* the full Hessian in one width-4 sweep, twice (the second sweep reuses tape blocks) */
  double e4[N][N] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}};
  for (int rep = 0; rep < 2; rep++) {
    double H[N][N] = {{0}};
    __enzyme_fwddiffv((void *)grad_E, enzyme_width, 4, enzyme_dup, x, e4[0], e4[1], e4[2], e4[3],
                      enzyme_dupnoneed, g, H[0], H[1], H[2], H[3], enzyme_const, N);
    for (int k = 0; k < N; k++) {
      double xp[N], xm[N], gp[N], gm[N];
      for (int i = 0; i < N; i++) { xp[i] = x[i] + h * e4[k][i]; xm[i] = x[i] - h * e4[k][i]; }
      grad_E(xp, gp, N);
      grad_E(xm, gm, N);
      for (int i = 0; i < N; i++) fc_near("full Hessian, width 4", H[k][i], (gp[i] - gm[i]) / (2 * h), 1e-6);
    }
  }
  double g1[N], dg1[N] = {0};
  __enzyme_fwddiffv((void *)grad_E, enzyme_dup, x, e[1], enzyme_dup, g1, dg1, enzyme_const, N);
  for (int i = 0; i < N; i++) fc_near("width 1 column", dg1[i], dg[1][i], 1e-12);
}

/* a loop whose trip count depends on the data: the inner gradient pushes and pops its tape */
double until(const double *x, int n) {
  double s = 0;
  int i = 0;
  while (s < 3.0 && i < 40) { s += sin(x[i % n]) * x[(i + 1) % n] + 0.2; i++; }
  return s * s;
}
void grad_until(const double *x, double *gx, int n) {
  for (int i = 0; i < n; i++) gx[i] = 0;
  __enzyme_autodiffv((void *)until, enzyme_dup, x, gx, enzyme_const, n);
}
static void hessian_through_dynamic_loop(void) {
  double x[3] = {0.4, 0.9, -0.3}, v[3] = {1.0, -0.5, 0.25}, g[3], hv[3] = {0}, h = 1e-6;
  __enzyme_fwddiffv((void *)grad_until, enzyme_dup, x, v, enzyme_dup, g, hv, enzyme_const, 3);
  double xp[3], xm[3], gp[3], gm[3];
  for (int i = 0; i < 3; i++) { xp[i] = x[i] + h * v[i]; xm[i] = x[i] - h * v[i]; }
  grad_until(xp, gp, 3);
  grad_until(xm, gm, 3);
  for (int i = 0; i < 3; i++) fc_near("Hessian-vector product through a while loop", hv[i], (gp[i] - gm[i]) / (2 * h), 1e-6);
}

int main(void) {
  double x = 0.7;
  double want2 = -sin(x) * x * x + 4 * x * cos(x) + 2 * sin(x);
  fc_near("fwd over fwd", __enzyme_fwddiff((void *)df, x, 1.0), want2, 1e-12);
  fc_near("fwd over rev", __enzyme_fwddiff((void *)df_rev, x, 1.0), want2, 1e-12);
  fc_near("rev over fwd", __enzyme_autodiff((void *)df, x), want2, 1e-12);
  double xs[N] = {0.5, -1.0, 2.0, 0.3}, v[N] = {0.2, 1.0, -0.5, 0.7};
  double gx[N], hv[N] = {0}, gp[N], gm[N], xp[N], xm[N], h = 1e-6;
  __enzyme_fwddiffv((void *)grad_g, enzyme_dup, xs, v, enzyme_dup, gx, hv, enzyme_const, N);
  for (int i = 0; i < N; i++) { xp[i] = xs[i] + h * v[i]; xm[i] = xs[i] - h * v[i]; }
  grad_g(xp, gp, N);
  grad_g(xm, gm, N);
  for (int i = 0; i < N; i++) fc_near("Hessian-vector product", hv[i], (gp[i] - gm[i]) / (2 * h), 1e-6);
  double g0[N];
  grad_g(xs, g0, N);
  for (int i = 0; i < N; i++) fc_near("gradient alongside", gx[i], g0[i], 1e-12);
  hessian_columns_with_workspace();
  hessian_through_dynamic_loop();
  printf("%1$s", "");   /* a positional format: constants keep their `$` between passes */
  return fc_done();
}
