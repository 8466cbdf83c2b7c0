/* n-body in struct-of-arrays layout: the inputs hold all x, then all y, then all z (pos0 and
 * vel0 alike), and the simulation keeps nine separate malloc'd arrays. */
#include "bench.h"

static const double SOFTENING2 = 0.01;

double nbody_final_energy(int n, int steps, double dt, const double *mass, const double *pos0, const double *vel0) {
  double *x = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n), *z = malloc(sizeof(double) * n);
  double *vx = malloc(sizeof(double) * n), *vy = malloc(sizeof(double) * n), *vz = malloc(sizeof(double) * n);
  double *ax = malloc(sizeof(double) * n), *ay = malloc(sizeof(double) * n), *az = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) {
    x[i] = pos0[i]; y[i] = pos0[n + i]; z[i] = pos0[2 * n + i];
    vx[i] = vel0[i]; vy[i] = vel0[n + i]; vz[i] = vel0[2 * n + i];
  }
  for (int s = 0; s < steps; s++) {
    for (int i = 0; i < n; i++) {
      double sx = 0, sy = 0, sz = 0;
      for (int j = 0; j < n; j++) {
        double dx = x[j] - x[i], dy = y[j] - y[i], dz = z[j] - z[i];
        double r2 = dx * dx + dy * dy + dz * dz + SOFTENING2;
        double f = mass[j] / (r2 * sqrt(r2));
        sx += f * dx; sy += f * dy; sz += f * dz;
      }
      ax[i] = sx; ay[i] = sy; az[i] = sz;
    }
    for (int i = 0; i < n; i++) { vx[i] += dt * ax[i]; vy[i] += dt * ay[i]; vz[i] += dt * az[i]; }
    for (int i = 0; i < n; i++) { x[i] += dt * vx[i]; y[i] += dt * vy[i]; z[i] += dt * vz[i]; }
  }
  double e = 0;
  for (int i = 0; i < n; i++) {
    e += 0.5 * mass[i] * (vx[i] * vx[i] + vy[i] * vy[i] + vz[i] * vz[i]);
    for (int j = i + 1; j < n; j++) {
      double dx = x[j] - x[i], dy = y[j] - y[i], dz = z[j] - z[i];
      e -= mass[i] * mass[j] / sqrt(dx * dx + dy * dy + dz * dz + SOFTENING2);
    }
  }
  free(x); free(y); free(z); free(vx); free(vy); free(vz); free(ax); free(ay); free(az);
  return e;
}

#define BENCH_KERNEL "nbody_soa"
#include "harness/nbody.h"
