/* The heat stepper through a step() function called once per time step that updates the state
 * in place, carrying the old left neighbour in a scalar (no second array at all). */
#include "bench.h"

static double laplacian_flux(double left, double mid, double right) { return left - 2 * mid + right; }

void step(int n, double r, const double *kappa, double *u) {
  double left = u[0]; /* the old value of u[i-1] */
  for (int i = 1; i < n - 1; i++) {
    double mid = u[i];
    u[i] = mid + r * kappa[i] * laplacian_flux(left, mid, u[i + 1]) + 0.5 * r * (mid - mid * mid * mid);
    left = mid;
  }
}

double heat_objective(int n, int steps, double r, const double *u0, const double *kappa) {
  double *u = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) u[i] = u0[i];
  for (int s = 0; s < steps; s++) step(n, r, kappa, u);
  double e = 0;
  for (int i = 0; i < n; i++) e += 0.5 * u[i] * u[i];
  free(u);
  return e;
}

#define BENCH_KERNEL "heat_step"
#include "harness/heat.h"
