/* integrate.c: kick-drift-kick leapfrog time stepping. */
#include "physics.h"

enum { PHYS_MAX_BODIES = 64 };

static void kick(double *state, const double *acc, int n, double h) {
  for (int i = 0; i < n; i++)
    for (int k = 0; k < 3; k++) state[PHYS_STRIDE * i + 3 + k] += h * acc[3 * i + k];
}

static void drift(double *state, int n, double dt) {
  for (int i = 0; i < n; i++)
    for (int k = 0; k < 3; k++) state[PHYS_STRIDE * i + k] += dt * state[PHYS_STRIDE * i + 3 + k];
}

void phys_step(double *state, const double *mass, int n, double dt) {
  double acc[3 * PHYS_MAX_BODIES];
  phys_accelerations(state, mass, n, acc);
  kick(state, acc, n, 0.5 * dt);
  drift(state, n, dt);
  phys_accelerations(state, mass, n, acc);
  kick(state, acc, n, 0.5 * dt);
}

void phys_simulate(double *state, const double *mass, int n, int steps, double dt) {
  for (int s = 0; s < steps; s++) phys_step(state, mass, n, dt);
}
