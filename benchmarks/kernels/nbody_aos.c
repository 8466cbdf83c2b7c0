/* n-body in array-of-structs layout with pairwise forces: each body is a struct (position,
 * velocity, acceleration, mass), and every pair i<j is visited once, its force added to one
 * body and subtracted from the other (Newton's third law halves the work). */
#include "bench.h"

static const double SOFTENING2 = 0.01;

struct body { double x[3], v[3], a[3], m; };

static void pairwise_accelerations(int n, struct body *b) {
  for (int i = 0; i < n; i++) b[i].a[0] = b[i].a[1] = b[i].a[2] = 0;
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++) {
      double d[3] = {b[j].x[0] - b[i].x[0], b[j].x[1] - b[i].x[1], b[j].x[2] - b[i].x[2]};
      double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + SOFTENING2;
      double inv3 = 1 / (r2 * sqrt(r2));
      for (int c = 0; c < 3; c++) {
        b[i].a[c] += b[j].m * inv3 * d[c];
        b[j].a[c] -= b[i].m * inv3 * d[c];
      }
    }
}

double nbody_final_energy(int n, int steps, double dt, const double *mass, const double *pos0, const double *vel0) {
  struct body *b = malloc(sizeof(struct body) * n);
  for (int i = 0; i < n; i++) {
    for (int c = 0; c < 3; c++) { b[i].x[c] = pos0[3 * i + c]; b[i].v[c] = vel0[3 * i + c]; }
    b[i].m = mass[i];
  }
  for (int s = 0; s < steps; s++) {
    pairwise_accelerations(n, b);
    for (int i = 0; i < n; i++)
      for (int c = 0; c < 3; c++) { b[i].v[c] += dt * b[i].a[c]; b[i].x[c] += dt * b[i].v[c]; }
  }
  double e = 0;
  for (int i = 0; i < n; i++) {
    e += 0.5 * b[i].m * (b[i].v[0] * b[i].v[0] + b[i].v[1] * b[i].v[1] + b[i].v[2] * b[i].v[2]);
    for (int j = i + 1; j < n; j++) {
      double dx = b[j].x[0] - b[i].x[0], dy = b[j].x[1] - b[i].x[1], dz = b[j].x[2] - b[i].x[2];
      e -= b[i].m * b[j].m / sqrt(dx * dx + dy * dy + dz * dz + SOFTENING2);
    }
  }
  free(b);
  return e;
}

#define BENCH_KERNEL "nbody_aos"
#include "harness/nbody.h"
