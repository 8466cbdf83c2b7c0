/* Hessians by forward over reverse: a column through a function with a heap workspace, and a
 * full 4x4 Hessian in one width-4 sweep over a gradient with a workspace, a loop and exp. */
#include "hcheck.h"
extern int enzyme_dup, enzyme_const, enzyme_width, enzyme_dupnoneed;
void __enzyme_autodiffv(void *, ...);
void __enzyme_fwddiffv(void *, ...);
#define N 4

double E1(const double *x, int n) {
  double *t = malloc(n * sizeof *t), s = 0;
  for (int i = 0; i < n; i++) t[i] = sin(x[i]) * x[i];
  for (int i = 0; i < n; i++) s += t[i] * t[i];
  free(t);
  return s;
}
void grad1(const double *x, double *g, int n) {
  for (int i = 0; i < n; i++) g[i] = 0;
  __enzyme_autodiffv((void *)E1, enzyme_dup, x, g, enzyme_const, n);
}

double E(const double *x, int n) {
  double *t = malloc(n * sizeof *t), s = 0;
  for (int i = 0; i < n; i++) t[i] = sin(x[i]) * x[(i + 1) % n];
  for (int i = 0; i < n; i++) s += t[i] * t[i] + exp(0.1 * x[i] * x[i]);
  free(t);
  return s;
}
void gradE(const double *x, double *g, int n) {
  for (int i = 0; i < n; i++) g[i] = 0;
  __enzyme_autodiffv((void *)E, enzyme_dup, x, g, enzyme_const, n);
}

int main(void) {
  double x1[2] = {0.3, -0.5}, g1[2], dx1[2] = {1, 0}, dg1[2] = {0, 0};
  __enzyme_fwddiffv((void *)grad1, enzyme_dup, x1, dx1, enzyme_dup, g1, dg1, enzyme_const, 2);
  double a = 0.3, t = a * sin(a), tp = sin(a) + a * cos(a), tpp = 2 * cos(a) - a * sin(a);
  hc_near("H00 with workspace", dg1[0], 2 * tp * tp + 2 * t * tpp, 1e-12);
  hc_near("H10 with workspace", dg1[1], 0.0, 1e-15);

  double x[N] = {0.3, -0.5, 0.8, 1.1}, g[N], dg[N][N] = {{0}};
  double e[N][N] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}};
  __enzyme_fwddiffv((void *)gradE, enzyme_width, 4, enzyme_dup, x, e[0], e[1], e[2], e[3],
                    enzyme_dupnoneed, g, dg[0], dg[1], dg[2], dg[3], enzyme_const, N);
  double h = 1e-5;
  for (int k = 0; k < N; k++) {
    double xp[N], xm[N], gp[N], gm[N];
    for (int i = 0; i < N; i++) { xp[i] = x[i] + h * e[k][i]; xm[i] = x[i] - h * e[k][i]; }
    gradE(xp, gp, N); gradE(xm, gm, N);
    for (int i = 0; i < N; i++) hc_near("hessian w4", dg[k][i], (gp[i] - gm[i]) / (2 * h), 1e-6);
  }
  return hc_done();
}
