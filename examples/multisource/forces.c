/* forces.c: pairwise gravitational accelerations and the system's energy. */
#include <math.h>
#include "physics.h"

double phys_kernel(double r2) {
  double s = r2 + PHYS_SOFTENING * PHYS_SOFTENING;
  return 1.0 / (s * sqrt(s));
}

void phys_accelerations(const double *state, const double *mass, int n, double *acc) {
  for (int i = 0; i < 3 * n; i++) acc[i] = 0.0;
  for (int i = 0; i < n; i++) {
    for (int j = i + 1; j < n; j++) {
      double d[3], r2 = 0.0;
      for (int k = 0; k < 3; k++) {
        d[k] = state[PHYS_STRIDE * j + k] - state[PHYS_STRIDE * i + k];
        r2 += d[k] * d[k];
      }
      double w = phys_kernel(r2);
      for (int k = 0; k < 3; k++) {
        acc[3 * i + k] += mass[j] * w * d[k];
        acc[3 * j + k] -= mass[i] * w * d[k];
      }
    }
  }
}

double phys_energy(const double *state, const double *mass, int n) {
  double kinetic = 0.0, potential = 0.0;
  for (int i = 0; i < n; i++) {
    const double *v = state + PHYS_STRIDE * i + 3;
    kinetic += 0.5 * mass[i] * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    for (int j = i + 1; j < n; j++) {
      double r2 = 0.0;
      for (int k = 0; k < 3; k++) {
        double d = state[PHYS_STRIDE * j + k] - state[PHYS_STRIDE * i + k];
        r2 += d * d;
      }
      potential -= mass[i] * mass[j] / sqrt(r2 + PHYS_SOFTENING * PHYS_SOFTENING);
    }
  }
  return kinetic + potential;
}
