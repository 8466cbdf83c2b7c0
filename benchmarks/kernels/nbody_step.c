/* n-body advancing through a step() function called once per time step: the state (positions,
 * velocities and a malloc'd acceleration array reused across steps) lives in a struct that
 * step() updates in place. */
#include "bench.h"

static const double SOFTENING2 = 0.01;

struct system {
  int n;
  const double *mass;
  double *pos, *vel; /* 3n each, updated in place */
  double *acc;       /* scratch, reused by every step */
};

void step(struct system *sys, double dt) {
  int n = sys->n;
  for (int i = 0; i < n; i++) {
    double ax = 0, ay = 0, az = 0;
    for (int j = 0; j < n; j++) {
      double dx = sys->pos[3 * j] - sys->pos[3 * i], dy = sys->pos[3 * j + 1] - sys->pos[3 * i + 1];
      double dz = sys->pos[3 * j + 2] - sys->pos[3 * i + 2];
      double r2 = dx * dx + dy * dy + dz * dz + SOFTENING2;
      double s = sys->mass[j] / (r2 * sqrt(r2));
      ax += s * dx; ay += s * dy; az += s * dz;
    }
    sys->acc[3 * i] = ax; sys->acc[3 * i + 1] = ay; sys->acc[3 * i + 2] = az;
  }
  for (int i = 0; i < 3 * n; i++) {
    sys->vel[i] += dt * sys->acc[i];
    sys->pos[i] += dt * sys->vel[i];
  }
}

double total_energy(const struct system *sys) {
  double e = 0;
  for (int i = 0; i < sys->n; i++) {
    const double *v = sys->vel + 3 * i, *p = sys->pos + 3 * i;
    e += 0.5 * sys->mass[i] * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    for (int j = i + 1; j < sys->n; j++) {
      const double *q = sys->pos + 3 * j;
      double dx = q[0] - p[0], dy = q[1] - p[1], dz = q[2] - p[2];
      e -= sys->mass[i] * sys->mass[j] / sqrt(dx * dx + dy * dy + dz * dz + SOFTENING2);
    }
  }
  return e;
}

double nbody_final_energy(int n, int steps, double dt, const double *mass, const double *pos0, const double *vel0) {
  struct system sys = {n, mass, malloc(sizeof(double) * 3 * n), malloc(sizeof(double) * 3 * n),
                       malloc(sizeof(double) * 3 * n)};
  memcpy(sys.pos, pos0, sizeof(double) * 3 * n);
  memcpy(sys.vel, vel0, sizeof(double) * 3 * n);
  for (int s = 0; s < steps; s++) step(&sys, dt);
  double e = total_energy(&sys);
  free(sys.pos); free(sys.vel); free(sys.acc);
  return e;
}

#define BENCH_KERNEL "nbody_step"
#include "harness/nbody.h"
