/* 1-D reaction-diffusion (Allen-Cahn) by an explicit finite-difference time stepper: per step
 * u_i += r kappa_i (u_{i-1} - 2 u_i + u_{i+1}) + r/2 (u_i - u_i^3), ends held fixed; objective
 * 0.5 sum u_i^2 of the final state. Gradient w.r.t. the initial state and the diffusivities.
 * Two malloc'd buffers, swapped by pointer every step (ping-pong). */
#include "bench.h"

double heat_objective(int n, int steps, double r, const double *u0, const double *kappa) {
  double *u = malloc(sizeof(double) * n), *next = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) u[i] = u0[i];
  next[0] = u[0];
  next[n - 1] = u[n - 1];
  for (int s = 0; s < steps; s++) {
    for (int i = 1; i < n - 1; i++)
      next[i] = u[i] + r * kappa[i] * (u[i - 1] - 2 * u[i] + u[i + 1]) + 0.5 * r * (u[i] - u[i] * u[i] * u[i]);
    double *swap = u; u = next; next = swap;
  }
  double e = 0;
  for (int i = 0; i < n; i++) e += 0.5 * u[i] * u[i];
  free(u); free(next);
  return e;
}

/* the hand-written adjoint, timed beside the AD gradient */
#define BENCH_EXPERT 1
#include "expert/heat_adjoint.h"

#define BENCH_KERNEL "heat"
#include "harness/heat.h"
