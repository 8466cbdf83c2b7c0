/* Gravitational n-body: semi-implicit (symplectic) Euler with Plummer softening, then the
 * total energy of the final state; gradient w.r.t. initial positions and velocities. */
#include "bench.h"

static const double SOFTENING2 = 0.01; /* eps^2: keeps close encounters finite */

/* a_i = sum_j m_j (x_j - x_i) / (|x_j - x_i|^2 + eps^2)^(3/2); the j == i term is 0 */
static void accelerations(int n, const double *mass, const double *pos, double *acc) {
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
static double energy(int n, const double *mass, const double *pos, const double *vel) {
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

double nbody_final_energy(int n, int steps, double dt, const double *mass, const double *pos0, const double *vel0) {
  double *pos = malloc(sizeof(double) * 3 * n);
  double *vel = malloc(sizeof(double) * 3 * n);
  double *acc = malloc(sizeof(double) * 3 * n);
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

/* ---- problem instance and timed calls ---- */
static int NB = 64, STEPS = 50;
static const double DT = 0.01;
static double *mass, *pos0, *vel0, *d_pos0, *d_vel0;
static double value;

static void primal_call(void) {
  value = nbody_final_energy(NB, STEPS, DT, mass, pos0, vel0);
  bench_sink = value;
}

static void grad_call(void) {
  memset(d_pos0, 0, sizeof(double) * 3 * NB);
  memset(d_vel0, 0, sizeof(double) * 3 * NB);
#if BENCH_HAVE_AD
  __enzyme_autodiff((void *)nbody_final_energy, enzyme_const, NB, enzyme_const, STEPS, enzyme_const, DT,
                    enzyme_const, mass, enzyme_dup, pos0, d_pos0, enzyme_dup, vel0, d_vel0);
#endif
  bench_sink = d_pos0[0] + d_vel0[0];
}

static double objective(void) { primal_call(); return value; }

int main(int argc, char **argv) {
  struct bench_opts o = bench_parse(argc, argv);
  if (o.quick) { NB = 16; STEPS = 10; }
  mass = malloc(sizeof(double) * NB);
  pos0 = malloc(sizeof(double) * 3 * NB); d_pos0 = malloc(sizeof(double) * 3 * NB);
  vel0 = malloc(sizeof(double) * 3 * NB); d_vel0 = malloc(sizeof(double) * 3 * NB);
  bench_seed(4);
  bench_fill(mass, NB, 0.5 / NB, 1.5 / NB);
  bench_fill(pos0, 3 * NB, -1, 1);
  bench_fill(vel0, 3 * NB, -0.1, 0.1);

  if (BENCH_HAVE_AD) {
    grad_call();
    double *gp = malloc(sizeof(double) * 3 * NB), *gv = malloc(sizeof(double) * 3 * NB);
    memcpy(gp, d_pos0, sizeof(double) * 3 * NB);
    memcpy(gv, d_vel0, sizeof(double) * 3 * NB);
    bench_check_spread("pos0", objective, pos0, gp, 3 * NB, 5, 1e-5);
    bench_check_spread("vel0", objective, vel0, gv, 3 * NB, 5, 1e-5);
    free(gp); free(gv);
  }
  struct bench_case cases[] = {{.label = "primal", .fn = primal_call}, {.label = "grad", .fn = grad_call}};
  bench_measure(cases, BENCH_HAVE_AD ? 2 : 1, o);
  char size[64];
  snprintf(size, sizeof size, "bodies%d_steps%d", NB, STEPS);
  return bench_report("nbody", size, objective(), cases, BENCH_HAVE_AD ? 2 : 1);
}
