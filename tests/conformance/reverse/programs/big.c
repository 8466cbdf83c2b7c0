/* Larger sizes: a 300x300 dense product with tanh (tape of 90k values per row sweep),
 * a 2e6-step scalar recurrence, both checked on a few entries. */
#include "hcheck.h"
#include <string.h>
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
enum { M = 300 };
double dense(const double *A, const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    double r = 0;
    for (int j = 0; j < n; j++) r += tanh(A[i * n + j] * x[j]);
    s += r * r;
  }
  return s;
}
double recur(const double *x, int n) {
  double y = x[0];
  for (long k = 0; k < 2000000; k++) y = y + 1e-6 * sin(y * x[1]);
  (void)n;
  return y;
}
int main(void) {
  double *A = malloc(sizeof(double) * M * M), *dA = calloc(M * M, sizeof(double));
  double x[M], dx[M] = {0};
  for (int i = 0; i < M * M; i++) A[i] = 0.01 * sin(i);
  for (int j = 0; j < M; j++) x[j] = cos(j);
  __enzyme_autodiff((void *)dense, enzyme_dup, A, dA, enzyme_dup, x, dx, enzyme_const, M);
  for (int k = 0; k < 3; k++) {
    int j = 37 * k + 5;
    double s = x[j], h = hc_h(s);
    x[j] = s + h; double fp = dense(A, x, M); x[j] = s - h; double fm = dense(A, x, M); x[j] = s;
    hc_near("dense dx", dx[j], (fp - fm) / (2 * h), 1e-5);
    int a = 1234 * k + 77;
    s = A[a]; h = hc_h(s);
    A[a] = s + h; fp = dense(A, x, M); A[a] = s - h; fm = dense(A, x, M); A[a] = s;
    hc_near("dense dA", dA[a], (fp - fm) / (2 * h), 1e-5);
  }
  double y[2] = {0.5, 1.3}, dy[2] = {0};
  __enzyme_autodiff((void *)recur, enzyme_dup, y, dy, enzyme_const, 2);
  for (int i = 0; i < 2; i++) {
    double s = y[i], h = 1e-5;
    y[i] = s + h; double fp = recur(y, 2); y[i] = s - h; double fm = recur(y, 2); y[i] = s;
    hc_near("recur", dy[i], (fp - fm) / (2 * h), 1e-5);
  }
  free(A); free(dA);
  return hc_done();
}
