/* Numerical kernels in reverse mode: LU with partial pivoting (row swaps), Cholesky,
 * triangular solves, CSR sparse mat-vec, scatter-add through an index array, Jacobi
 * iteration to a tolerance, an array of mixed int/double structs copied with memcpy,
 * float data accumulated in double, a global updated across calls. */
#include "hcheck.h"
#include <string.h>
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
enum { N = 4, M = N * N };

/* x = A^{-1} b via LU with partial pivoting; returns sum(w .* x) */
double lu_solve(const double *Ain, int n) {
  double A[N][N], b[N] = {1, -2, 0.5, 3}, w[N] = {1, 0.5, -1, 2};
  int piv[N];
  memcpy(A, Ain, sizeof A);
  for (int i = 0; i < n; i++) piv[i] = i;
  for (int k = 0; k < n; k++) {
    int p = k;
    for (int i = k + 1; i < n; i++) if (fabs(A[i][k]) > fabs(A[p][k])) p = i;
    if (p != k) {
      for (int j = 0; j < n; j++) { double t = A[k][j]; A[k][j] = A[p][j]; A[p][j] = t; }
      int t = piv[k]; piv[k] = piv[p]; piv[p] = t;
    }
    for (int i = k + 1; i < n; i++) {
      A[i][k] /= A[k][k];
      for (int j = k + 1; j < n; j++) A[i][j] -= A[i][k] * A[k][j];
    }
  }
  double y[N], x[N];
  for (int i = 0; i < n; i++) { y[i] = b[piv[i]]; for (int j = 0; j < i; j++) y[i] -= A[i][j] * y[j]; }
  for (int i = n - 1; i >= 0; i--) { x[i] = y[i]; for (int j = i + 1; j < n; j++) x[i] -= A[i][j] * x[j]; x[i] /= A[i][i]; }
  double s = 0;
  for (int i = 0; i < n; i++) s += w[i] * x[i];
  return s;
}
/* log det of S = A A^T + I via Cholesky */
double chol_logdet(const double *A, int n) {
  double L[N][N] = {{0}};
  double S[N][N];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      S[i][j] = i == j;
      for (int k = 0; k < n; k++) S[i][j] += A[i * n + k] * A[j * n + k];
    }
  for (int j = 0; j < n; j++) {
    double d = S[j][j];
    for (int k = 0; k < j; k++) d -= L[j][k] * L[j][k];
    L[j][j] = sqrt(d);
    for (int i = j + 1; i < n; i++) {
      double s = S[i][j];
      for (int k = 0; k < j; k++) s -= L[i][k] * L[j][k];
      L[i][j] = s / L[j][j];
    }
  }
  double ld = 0;
  for (int i = 0; i < n; i++) ld += 2 * log(L[i][i]);
  return ld;
}
static const int rowptr[N + 1] = {0, 3, 5, 8, 10};
static const int colidx[10] = {0, 1, 3, 1, 2, 0, 2, 3, 1, 3};
double csr(const double *vals, int n) {
  double x[N] = {0.5, -1, 2, 0.25}, y[N];
  for (int i = 0; i < n; i++) {
    y[i] = 0;
    for (int k = rowptr[i]; k < rowptr[i + 1]; k++) y[i] += vals[k] * x[colidx[k]];
  }
  double s = 0;
  for (int i = 0; i < n; i++) s += y[i] * y[i];
  return s;
}
double scatter(const double *x, int n) {
  static const int bin[M] = {3, 1, 0, 2, 2, 1, 3, 0, 0, 1, 2, 3, 3, 2, 1, 0};
  double h[N] = {0};
  for (int i = 0; i < n; i++) h[bin[i]] += x[i] * x[i];
  return h[0] * h[1] + h[2] * h[3];
}
double jacobi(const double *Ain, int n) {
  /* diagonally dominant A = Ain + 8 I; iterate x = D^{-1}(b - R x) until converged */
  double x[N] = {0}, xn[N], b[N] = {1, 2, 3, 4};
  for (int it = 0; it < 200; it++) {
    double diff = 0;
    for (int i = 0; i < n; i++) {
      double s = b[i];
      for (int j = 0; j < n; j++) if (j != i) s -= Ain[i * n + j] * x[j];
      xn[i] = s / (Ain[i * n + i] + 8.0);
      diff += fabs(xn[i] - x[i]);
    }
    memcpy(x, xn, sizeof x);
    if (diff < 1e-15) break;
  }
  return x[0] + 2 * x[1] + 3 * x[2] + 4 * x[3];
}
struct rec { int id; double v; double w; char tag; };
double records(const double *x, int n) {
  struct rec a[M], b[M];
  for (int i = 0; i < n; i++) { a[i].id = i; a[i].v = x[i]; a[i].w = 0.5 * i; a[i].tag = 'a'; }
  memcpy(b, a, sizeof(struct rec) * n);
  double s = 0;
  for (int i = 0; i < n; i++) s += b[i].v * b[(i + 1) % n].v * b[i].w + (b[i].tag == 'a') * b[i].id * b[i].v;
  return s;
}
double fdata(const double *x, int n) {
  float f[M];
  for (int i = 0; i < n; i++) f[i] = (float)(x[i] * 0.5);
  double s = 0;
  for (int i = 0; i < n; i++) s += (double)f[i] * x[i];
  return s;
}
double g_total;
double accumulate(const double *x, int n) {
  for (int i = 0; i < n; i++) g_total += x[i] * x[i];
  return g_total;
}

typedef double (*fn)(const double *, int);
static void check(const char *name, fn f, const double *got, const double *x, int n, double tol) {
  for (int i = 0; i < n; i++) {
    double xp[M], xm[M];
    memcpy(xp, x, sizeof xp); memcpy(xm, x, sizeof xm);
    double h = hc_h(x[i]);
    xp[i] += h; xm[i] -= h;
    char buf[64];
    snprintf(buf, sizeof buf, "%s d[%d]", name, i);
    hc_near(buf, got[i], (f(xp, N) - f(xm, N)) / (2 * h), tol);
  }
}
#define CHECK(f, n, tol) do { double d[M] = {0}; \
    __enzyme_autodiff((void *)f, enzyme_dup, x, d, enzyme_const, N); check(#f, f, d, x, n, tol); } while (0)
static double scatter_n(const double *x, int n) { (void)n; return scatter(x, M); }
static double records_n(const double *x, int n) { (void)n; return records(x, M); }

int main(void) {
  double x[M];
  for (int i = 0; i < M; i++) x[i] = sin(1.7 * i + 0.3) + (i % (N + 1) == 0 ? 2.0 : 0.0);
  CHECK(lu_solve, M, 1e-6); CHECK(chol_logdet, M, 1e-6); CHECK(jacobi, M, 1e-6);
  CHECK(csr, 10, 1e-6);
  {
    double d[M] = {0};
    __enzyme_autodiff((void *)scatter, enzyme_dup, x, d, enzyme_const, M);
    check("scatter", scatter_n, d, x, M, 1e-6);
    double d2[M] = {0};
    __enzyme_autodiff((void *)records, enzyme_dup, x, d2, enzyme_const, M);
    check("records", records_n, d2, x, M, 1e-6);
  }
  {
    double d[M] = {0};
    __enzyme_autodiff((void *)fdata, enzyme_dup, x, d, enzyme_const, M);
    for (int i = 0; i < M; i++) hc_near("float data", d[i], (double)(float)(x[i] * 0.5) + 0.5 * x[i], 1e-6);
  }
  {
    g_total = 1.0;
    double d[N] = {0};
    double want_total = 1.0;
    for (int i = 0; i < N; i++) want_total += x[i] * x[i];
    __enzyme_autodiff((void *)accumulate, enzyme_dup, x, d, enzyme_const, N);
    hc_near("global updated once", g_total, want_total, 1e-14);
    for (int i = 0; i < N; i++) hc_near("global accumulate", d[i], 2 * x[i], 1e-12);
  }
  return hc_done();
}
