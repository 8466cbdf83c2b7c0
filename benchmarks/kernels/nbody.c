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
static double *t_pos0, *t_vel0; /* forward mode: direction */
static double *s_pos0, *s_vel0; /* split mode shadows */
static double *v_pos0[BENCH_WIDTH], *v_vel0[BENCH_WIDTH]; /* vector mode directions */
static double value, tangent;
static bench_lanes v_tangent;          /* lane tangents of the vector call */
static double f_tangent[BENCH_WIDTH];  /* the same from scalar sweeps */

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

static void fwd_call(void) {
#if BENCH_HAVE_FWD
  tangent = __enzyme_fwddiff((void *)nbody_final_energy, enzyme_const, NB, enzyme_const, STEPS, enzyme_const, DT,
                             enzyme_const, mass, enzyme_dup, pos0, t_pos0, enzyme_dup, vel0, t_vel0);
#endif
  bench_sink = tangent;
}

/* KEPT is empty or BENCH_KEPT */
#define NBODY_SPLIT(KEPT)                                                                                     \
  void *tape = __enzyme_augmentfwd((void *)nbody_final_energy, enzyme_const, NB, enzyme_const, STEPS,         \
                                   enzyme_const, DT, KEPT enzyme_const, mass, KEPT enzyme_dup, pos0, s_pos0,  \
                                   KEPT enzyme_dup, vel0, s_vel0);                                            \
  __enzyme_reverse((void *)nbody_final_energy, enzyme_const, NB, enzyme_const, STEPS, enzyme_const, DT,       \
                   KEPT enzyme_const, mass, KEPT enzyme_dup, pos0, s_pos0, KEPT enzyme_dup, vel0, s_vel0, 1.0, tape)

static void split_zero(void) {
  memset(s_pos0, 0, sizeof(double) * 3 * NB);
  memset(s_vel0, 0, sizeof(double) * 3 * NB);
}

static void split_call(void) {
  split_zero();
#if BENCH_HAVE_SPLIT
  NBODY_SPLIT();
#endif
  bench_sink = s_pos0[0] + s_vel0[0];
}

static void split_kept_call(void) {
  split_zero();
#if BENCH_HAVE_SPLIT
  NBODY_SPLIT(BENCH_KEPT);
#endif
  bench_sink = s_pos0[0] + s_vel0[0];
}

/* Vector forward mode: four directions in one call, against four scalar sweeps. */
static void vec4_call(void) {
#if BENCH_HAVE_VEC
  v_tangent = __enzyme_fwddiff_lanes((void *)nbody_final_energy, enzyme_width, BENCH_WIDTH,
                                     enzyme_const, NB, enzyme_const, STEPS, enzyme_const, DT, enzyme_const, mass,
                                     enzyme_dup, pos0, v_pos0[0], v_pos0[1], v_pos0[2], v_pos0[3],
                                     enzyme_dup, vel0, v_vel0[0], v_vel0[1], v_vel0[2], v_vel0[3]);
#endif
  bench_sink = v_tangent.d[BENCH_WIDTH - 1];
}

static void fwd4_call(void) {
#if BENCH_HAVE_VEC
  for (int k = 0; k < BENCH_WIDTH; k++)
    f_tangent[k] = __enzyme_fwddiff((void *)nbody_final_energy, enzyme_const, NB, enzyme_const, STEPS,
                                    enzyme_const, DT, enzyme_const, mass,
                                    enzyme_dup, pos0, v_pos0[k], enzyme_dup, vel0, v_vel0[k]);
#endif
  bench_sink = f_tangent[BENCH_WIDTH - 1];
}

static double objective(void) { primal_call(); return value; }

int main(int argc, char **argv) {
  struct bench_opts o = bench_parse(argc, argv);
  if (o.quick) { NB = 16; STEPS = 10; }
  long n3 = 3L * NB;
  mass = malloc(sizeof(double) * NB);
  pos0 = malloc(sizeof(double) * n3); d_pos0 = malloc(sizeof(double) * n3);
  vel0 = malloc(sizeof(double) * n3); d_vel0 = malloc(sizeof(double) * n3);
  t_pos0 = malloc(sizeof(double) * n3); s_pos0 = malloc(sizeof(double) * n3);
  t_vel0 = malloc(sizeof(double) * n3); s_vel0 = malloc(sizeof(double) * n3);
  bench_seed(4);
  bench_fill(mass, NB, 0.5 / NB, 1.5 / NB);
  bench_fill(pos0, n3, -1, 1);
  bench_fill(vel0, n3, -0.1, 0.1);
  bench_fill(t_pos0, n3, -1, 1);
  bench_fill(t_vel0, n3, -1, 1);
  bench_alloc_lanes(v_pos0, n3, -1, 1);
  bench_alloc_lanes(v_vel0, n3, -1, 1);

  if (BENCH_HAVE_AD) {
    grad_call();
    double *gp = bench_copy(d_pos0, n3), *gv = bench_copy(d_vel0, n3);
    bench_check_spread("pos0", objective, pos0, gp, n3, 5, 1e-5);
    bench_check_spread("vel0", objective, vel0, gv, n3, 5, 1e-5);
    /* forward mode: the tangent must equal the gradient along the direction */
    bench_mode = BENCH_FORWARD;
    if (BENCH_HAVE_FWD) {
      fwd_call();
      bench_check("tangent", 0, tangent, bench_dot(gp, t_pos0, n3) + bench_dot(gv, t_vel0, n3), 1e-8);
    }
    bench_mode = BENCH_SPLIT;
    if (BENCH_HAVE_SPLIT) {
      for (int kept = 0; kept < 2; kept++) {
        if (kept) split_kept_call(); else split_call();
        bench_check_all("pos0", s_pos0, gp, n3, 1e-10);
        bench_check_all("vel0", s_vel0, gv, n3, 1e-10);
      }
    }
    /* vector mode: lanes equal the scalar sweeps, and each sweep the gradient along its direction */
    bench_mode = BENCH_VECTOR;
    if (BENCH_HAVE_VEC) {
      fwd4_call();
      vec4_call();
      for (int k = 0; k < BENCH_WIDTH; k++) {
        bench_check("tangent.lane", k, v_tangent.d[k], f_tangent[k], BENCH_LANE_RTOL);
        bench_check("sweep", k, f_tangent[k], bench_dot(gp, v_pos0[k], n3) + bench_dot(gv, v_vel0[k], n3), 1e-8);
      }
    }
    free(gp); free(gv);
  }
  struct bench_case cases[7];
  int ncases = 0;
  bench_add(cases, &ncases, 1, "primal", primal_call);
  bench_add(cases, &ncases, BENCH_HAVE_AD, "grad", grad_call);
  bench_add(cases, &ncases, BENCH_HAVE_FWD, "fwd", fwd_call);
  bench_add(cases, &ncases, BENCH_HAVE_SPLIT, "split", split_call);
  bench_add(cases, &ncases, BENCH_HAVE_SPLIT, "split_kept", split_kept_call);
  bench_add(cases, &ncases, BENCH_HAVE_VEC, "vec4", vec4_call);
  bench_add(cases, &ncases, BENCH_HAVE_VEC, "fwd4", fwd4_call);
  bench_measure(cases, ncases, o);
  char size[64];
  snprintf(size, sizeof size, "bodies%d_steps%d", NB, STEPS);
  return bench_report("nbody", size, objective(), cases, ncases);
}
