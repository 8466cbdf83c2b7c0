/* n-body as nbody.c, with `restrict` on every pointer (parameters and the malloc'd
 * trajectory arrays): the promise that nothing aliases. */
#include "bench.h"

static const double SOFTENING2 = 0.01; /* eps^2: keeps close encounters finite */

/* a_i = sum_j m_j (x_j - x_i) / (|x_j - x_i|^2 + eps^2)^(3/2); the j == i term is 0 */
static void accelerations(int n, const double *restrict mass, const double *restrict pos, double *restrict acc) {
  for (int i = 0; i < n; i++) {
    double ax = 0, ay = 0, az = 0;
    for (int j = 0; j < n; j++) {
      double dx = pos[3 * j] - pos[3 * i], dy = pos[3 * j + 1] - pos[3 * i + 1], dz = pos[3 * j + 2] - pos[3 * i + 2];
      double r2 = dx * dx + dy * dy + dz * dz + SOFTENING2;
      double s = mass[j] / (r2 * sqrt(r2));
      ax += s * dx; ay += s * dy; az += s * dz;
    }
    acc[3 * i] = ax; acc[3 * i + 1] = ay; acc[3 * i + 2] = az;
  }
}

/* E = sum_i m_i |v_i|^2 / 2 - sum_{i<j} m_i m_j / sqrt(|x_i - x_j|^2 + eps^2) */
static double energy(int n, const double *restrict mass, const double *restrict pos, const double *restrict vel) {
  double e = 0;
  for (int i = 0; i < n; i++) {
    e += 0.5 * mass[i] * (vel[3 * i] * vel[3 * i] + vel[3 * i + 1] * vel[3 * i + 1] + vel[3 * i + 2] * vel[3 * i + 2]);
    for (int j = i + 1; j < n; j++) {
      double dx = pos[3 * j] - pos[3 * i], dy = pos[3 * j + 1] - pos[3 * i + 1], dz = pos[3 * j + 2] - pos[3 * i + 2];
      e -= mass[i] * mass[j] / sqrt(dx * dx + dy * dy + dz * dz + SOFTENING2);
    }
  }
  return e;
}

double nbody_final_energy(int n, int steps, double dt, const double *restrict mass, const double *restrict pos0,
                          const double *restrict vel0) {
  double *restrict pos = malloc(sizeof(double) * 3 * n);
  double *restrict vel = malloc(sizeof(double) * 3 * n);
  double *restrict acc = malloc(sizeof(double) * 3 * n);
  for (int i = 0; i < 3 * n; i++) { pos[i] = pos0[i]; vel[i] = vel0[i]; }
  for (int s = 0; s < steps; s++) {
    accelerations(n, mass, pos, acc);
    for (int i = 0; i < 3 * n; i++) {
      vel[i] += dt * acc[i];
      pos[i] += dt * vel[i];
    }
  }
  double e = energy(n, mass, pos, vel);
  free(pos); free(vel); free(acc);
  return e;
}


#define BENCH_KERNEL "nbody_restrict"
#include "harness/nbody.h"
