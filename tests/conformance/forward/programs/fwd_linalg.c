/* Forward and vector mode through numerical linear algebra and ODE code: LU with partial
 * pivoting (row swaps decided by active values), a solve, Cholesky, a determinant via the
 * LU, VLA matrix parameters, and an RK4 integrator over a struct of parameters; every
 * lane against central differences. */
#include <string.h>
#include "hcheck.h"
extern int enzyme_dup, enzyme_dupnoneed, enzyme_const, enzyme_width;
double __enzyme_fwddiff(void *, ...);
void __enzyme_fwddiffv(void *, ...);
typedef struct { double d[3]; } d3;
d3 __enzyme_fwddiff3(void *, ...);
#define N 4

/* in-place LU with partial pivoting; returns the sign of the permutation */
__attribute__((noinline)) static int lu(int n, double A[n][n], int *piv) {
  int sign = 1;
  for (int k = 0; k < n; k++) {
    int p = k;
    for (int i = k + 1; i < n; i++) if (fabs(A[i][k]) > fabs(A[p][k])) p = i;
    piv[k] = p;
    if (p != k) {
      sign = -sign;
      for (int j = 0; j < n; j++) { double t = A[k][j]; A[k][j] = A[p][j]; A[p][j] = t; }
    }
    for (int i = k + 1; i < n; i++) {
      A[i][k] /= A[k][k];
      for (int j = k + 1; j < n; j++) A[i][j] -= A[i][k] * A[k][j];
    }
  }
  return sign;
}

__attribute__((noinline)) static void lu_solve(int n, double LU[n][n], const int *piv, double *b) {
  for (int k = 0; k < n; k++) if (piv[k] != k) { double t = b[k]; b[k] = b[piv[k]]; b[piv[k]] = t; }
  for (int i = 1; i < n; i++) for (int j = 0; j < i; j++) b[i] -= LU[i][j] * b[j];
  for (int i = n - 1; i >= 0; i--) {
    for (int j = i + 1; j < n; j++) b[i] -= LU[i][j] * b[j];
    b[i] /= LU[i][i];
  }
}

/* solve A x = b for a matrix built from the parameters; return |x|^2 + log|det A| */
double solve_obj(const double *p, double *x) {
  double A[N][N];
  int piv[N];
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) A[i][j] = (i == j ? 0.5 : 0.0) + p[(i + 2 * j) % N] * (1.0 + 0.25 * i - 0.1 * j);
  for (int i = 0; i < N; i++) x[i] = 1.0 + i * p[i];
  int s = lu(N, A, piv);
  lu_solve(N, A, piv, x);
  double det = s;
  for (int i = 0; i < N; i++) det *= A[i][i];
  double r = log(fabs(det));
  for (int i = 0; i < N; i++) r += x[i] * x[i];
  return r;
}

/* Cholesky of M = B B^T + I, returns sum of log diagonal (= log det / 2) */
double chol_logdet(const double *b, int n) {
  double *L = calloc((size_t)n * n, sizeof *L), *M = malloc((size_t)n * n * sizeof *M);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double s = (i == j);
      for (int k = 0; k < n; k++) s += b[i * n + k] * b[j * n + k];
      M[i * n + j] = s;
    }
  double ld = 0;
  for (int j = 0; j < n; j++) {
    double s = M[j * n + j];
    for (int k = 0; k < j; k++) s -= L[j * n + k] * L[j * n + k];
    L[j * n + j] = sqrt(s);
    ld += log(L[j * n + j]);
    for (int i = j + 1; i < n; i++) {
      double t = M[i * n + j];
      for (int k = 0; k < j; k++) t -= L[i * n + k] * L[j * n + k];
      L[i * n + j] = t / L[j * n + j];
    }
  }
  free(L);
  free(M);
  return ld;
}

/* RK4 on a Lotka-Volterra system with a parameter struct */
typedef struct { double a, b, c, d; int steps; double dt; } lv_params;
static void lv_rhs(const lv_params *P, const double *y, double *dy) {
  dy[0] = P->a * y[0] - P->b * y[0] * y[1];
  dy[1] = P->d * y[0] * y[1] - P->c * y[1];
}
void rk4(const lv_params *P, double *y) {
  double k1[2], k2[2], k3[2], k4[2], t[2];
  for (int s = 0; s < P->steps; s++) {
    lv_rhs(P, y, k1);
    for (int i = 0; i < 2; i++) t[i] = y[i] + 0.5 * P->dt * k1[i];
    lv_rhs(P, t, k2);
    for (int i = 0; i < 2; i++) t[i] = y[i] + 0.5 * P->dt * k2[i];
    lv_rhs(P, t, k3);
    for (int i = 0; i < 2; i++) t[i] = y[i] + P->dt * k3[i];
    lv_rhs(P, t, k4);
    for (int i = 0; i < 2; i++) y[i] += P->dt / 6.0 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
  }
}

static double solve_val(const double *p) { double x[N]; return solve_obj(p, x); }

int main(void) {
  double p[N] = {0.9, -0.4, 1.3, 0.2}, h = 1e-6;
  double dirs[3][N] = {{1, 0, 0, 0}, {0.3, -0.2, 0.5, 1.0}, {0, 0, 1, 0}};
  double x[N], dx[3][N];
  memset(dx, 0, sizeof dx);
  d3 t = __enzyme_fwddiff3((void *)solve_obj, enzyme_width, 3, enzyme_dup, p, dirs[0], dirs[1], dirs[2],
                           enzyme_dupnoneed, x, dx[0], dx[1], dx[2]);
  for (int k = 0; k < 3; k++) {
    double pp[N], pm[N], xp[N], xm[N];
    for (int i = 0; i < N; i++) { pp[i] = p[i] + h * dirs[k][i]; pm[i] = p[i] - h * dirs[k][i]; }
    double fd = (solve_obj(pp, xp) - solve_obj(pm, xm)) / (2 * h);
    hc_near("lu objective lane", t.d[k], fd, 1e-6);
    for (int i = 0; i < N; i++) hc_near("lu solution lane", dx[k][i], (xp[i] - xm[i]) / (2 * h), 1e-6);
  }
  double one = __enzyme_fwddiff((void *)solve_val, p, dirs[1]);
  hc_near("scalar sweep = lane 1", one, t.d[1], 1e-12);

  double b[9] = {0.5, 0.1, -0.3, 0.2, 1.1, 0.4, -0.6, 0.3, 0.8}, db[9], bp[9], bm[9];
  for (int i = 0; i < 9; i++) { db[i] = cos(i * 0.7); bp[i] = b[i] + h * db[i]; bm[i] = b[i] - h * db[i]; }
  hc_near("cholesky", __enzyme_fwddiff((void *)chol_logdet, enzyme_dup, b, db, enzyme_const, 3),
          (chol_logdet(bp, 3) - chol_logdet(bm, 3)) / (2 * h), 1e-6);

  lv_params P = {1.1, 0.4, 0.9, 0.2, 40, 0.05}, dP;
  memset(&dP, 0, sizeof dP);
  dP.b = 1.0;  /* sensitivity to b */
  double y[2] = {2.0, 1.5}, dy[2] = {0, 0};
  __enzyme_fwddiffv((void *)rk4, enzyme_dup, &P, &dP, enzyme_dup, y, dy);
  lv_params Pp = P, Pm = P;
  Pp.b += h; Pm.b -= h;
  double yp[2] = {2.0, 1.5}, ym[2] = {2.0, 1.5};
  rk4(&Pp, yp); rk4(&Pm, ym);
  for (int i = 0; i < 2; i++) hc_near("rk4 sensitivity", dy[i], (yp[i] - ym[i]) / (2 * h), 1e-6);
  return hc_done();
}
