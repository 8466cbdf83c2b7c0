/* The heat stepper with one state array and a scratch array reused every step: new values
 * go into the scratch, then are copied back (memcpy) into the state. */
#include "bench.h"

double heat_objective(int n, int steps, double r, const double *u0, const double *kappa) {
  double *u = malloc(sizeof(double) * n), *tmp = malloc(sizeof(double) * n);
  memcpy(u, u0, sizeof(double) * n);
  for (int s = 0; s < steps; s++) {
    for (int i = 1; i < n - 1; i++)
      tmp[i] = u[i] + r * kappa[i] * (u[i - 1] - 2 * u[i] + u[i + 1]) + 0.5 * r * (u[i] - u[i] * u[i] * u[i]);
    memcpy(u + 1, tmp + 1, sizeof(double) * (n - 2));
  }
  double e = 0;
  for (int i = 0; i < n; i++) e += 0.5 * u[i] * u[i];
  free(u); free(tmp);
  return e;
}

#define BENCH_KERNEL "heat_copy"
#include "harness/heat.h"
