/* The n-body harness every nbody variant shares: problem instance, timed calls of each mode,
 * checks and main(). Included at the end of a variant file, after the objective it defines;
 * BENCH_KERNEL names the variant in the RESULT line. */
#ifndef BENCH_KERNEL
#error define BENCH_KERNEL (the variant's name) before including this harness
#endif

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

/* The hand-written adjoint (expert line), when the variant provides one: the same zeroing as
 * grad_call, then nbody_expert_gradient accumulates into the same shadows. */
#ifdef BENCH_EXPERT
static void expert_call(void) {
  memset(d_pos0, 0, sizeof(double) * 3 * NB);
  memset(d_vel0, 0, sizeof(double) * 3 * NB);
  nbody_expert_gradient(NB, STEPS, DT, mass, pos0, vel0, d_pos0, d_vel0);
  bench_sink = d_pos0[0] + d_vel0[0];
}
#define NBODY_HAVE_EXPERT 1
#else
static void expert_call(void) {}
#define NBODY_HAVE_EXPERT 0
#endif

static double objective(void) { primal_call(); return value; }

int main(int argc, char **argv) {
  struct bench_opts o = bench_parse(argc, argv);
  if (o.quick) { NB = 16; STEPS = 10; }
  if (o.size) NB = (int)o.size; /* --size: number of bodies */
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
    bench_dump(&o, "pos0", gp, n3);
    bench_dump(&o, "vel0", gv, n3);
    if (NBODY_HAVE_EXPERT) { /* the hand-written adjoint must agree with ours to rounding */
      expert_call();
      bench_check_all("expert.pos0", d_pos0, gp, n3, 1e-9);
      bench_check_all("expert.vel0", d_vel0, gv, n3, 1e-9);
    }
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
  struct bench_case cases[8];
  int ncases = 0;
  bench_add(cases, &ncases, 1, "primal", primal_call);
  bench_add(cases, &ncases, BENCH_HAVE_AD, "grad", grad_call);
  bench_add(cases, &ncases, NBODY_HAVE_EXPERT, "expert", expert_call);
  bench_add(cases, &ncases, BENCH_HAVE_FWD, "fwd", fwd_call);
  bench_add(cases, &ncases, BENCH_HAVE_SPLIT, "split", split_call);
  bench_add(cases, &ncases, BENCH_HAVE_SPLIT, "split_kept", split_kept_call);
  bench_add(cases, &ncases, BENCH_HAVE_VEC, "vec4", vec4_call);
  bench_add(cases, &ncases, BENCH_HAVE_VEC, "fwd4", fwd4_call);
  bench_measure(cases, ncases, o);
  char size[64];
  snprintf(size, sizeof size, "bodies%d_steps%d", NB, STEPS);
  return bench_report(BENCH_KERNEL, size, objective(), cases, ncases);
}
