/* The heat stepper as sparse linear algebra: the diffusion operator A = I + r diag(kappa) L is
 * assembled once into CSR arrays (row pointers, column indices, values that depend on kappa),
 * and every step is a CSR matrix-vector product plus the pointwise reaction term. */
#include "bench.h"

struct csr { int n; int *row_ptr, *col; double *val; };

static struct csr assemble(int n, double r, const double *kappa) {
  struct csr a = {n, malloc(sizeof(int) * (n + 1)), malloc(sizeof(int) * 3 * n), malloc(sizeof(double) * 3 * n)};
  int nnz = 0;
  for (int i = 0; i < n; i++) {
    a.row_ptr[i] = nnz;
    if (i == 0 || i == n - 1) { a.col[nnz] = i; a.val[nnz++] = 1.0; continue; } /* fixed ends */
    a.col[nnz] = i - 1; a.val[nnz++] = r * kappa[i];
    a.col[nnz] = i;     a.val[nnz++] = 1.0 - 2.0 * r * kappa[i];
    a.col[nnz] = i + 1; a.val[nnz++] = r * kappa[i];
  }
  a.row_ptr[n] = nnz;
  return a;
}

static void csr_matvec(const struct csr *a, const double *x, double *y) {
  for (int i = 0; i < a->n; i++) {
    double s = 0;
    for (int k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++) s += a->val[k] * x[a->col[k]];
    y[i] = s;
  }
}

double heat_objective(int n, int steps, double r, const double *u0, const double *kappa) {
  struct csr a = assemble(n, r, kappa);
  double *u = malloc(sizeof(double) * n), *next = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) u[i] = u0[i];
  for (int s = 0; s < steps; s++) {
    csr_matvec(&a, u, next);
    for (int i = 1; i < n - 1; i++) next[i] += 0.5 * r * (u[i] - u[i] * u[i] * u[i]);
    double *swap = u; u = next; next = swap;
  }
  double e = 0;
  for (int i = 0; i < n; i++) e += 0.5 * u[i] * u[i];
  free(u); free(next); free(a.row_ptr); free(a.col); free(a.val);
  return e;
}

#define BENCH_KERNEL "heat_csr"
#include "harness/heat.h"
