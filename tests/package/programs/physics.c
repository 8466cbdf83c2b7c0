/* Functions the package tests export: scalar and array results, float32, in-out arrays,
 * integer index arrays and a length that is a product. */
#include <math.h>

double energy(const double *x, int n, double k) {
  double e = 0.0;
  for (int i = 0; i + 1 < n; i++) { double d = x[i + 1] - x[i] - 1.0; e += 0.5 * k * d * d; }
  for (int i = 0; i < n; i++) e += cos(x[i]) * exp(-0.1 * x[i] * x[i]);
  return e;
}

void residual(const double *p, int n, double *r) {
  for (int i = 0; i < n; i++) r[i] = sin(p[i]) * p[(i + 1) % n] + 0.5 * p[i] * p[i];
}

float energyf(const float *x, int n, float k) {
  float e = 0.0f;
  for (int i = 0; i < n; i++) e += k * x[i] * x[i] + sinf(x[i]);
  return e;
}

void damp(double *y, int n, double a) {
  for (int i = 0; i < n; i++) y[i] = a * sin(y[i]) + y[i] * y[i];
}

double gather(const double *A, int m, int n, const int *idx, double s) {
  double total = 0.0;
  for (int i = 0; i < m; i++) { double v = A[i * n + idx[i] % n]; total += s * v * v + A[i * n]; }
  return total;
}

int count_positive(const double *x, long n) {
  int count = 0;
  for (long i = 0; i < n; i++) count += x[i] > 0;
  return count;
}
