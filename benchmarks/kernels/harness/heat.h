/* The heat-equation harness every heat variant shares: problem instance, timed calls of each mode,
 * checks and main(). Included at the end of a variant file, after the objective it defines;
 * BENCH_KERNEL names the variant in the RESULT line. */
#ifndef BENCH_KERNEL
#error define BENCH_KERNEL (the variant's name) before including this harness
#endif

static int NX = 2000, STEPS = 500;
static const double R = 0.2; /* dt / dx^2: stable for kappa < 1.25 */
static double *u0, *kappa, *d_u0, *d_kappa;
static double *t_u0, *t_kappa; /* forward mode: direction */
static double *s_u0, *s_kappa; /* split mode shadows */
static double *v_u0[BENCH_WIDTH], *v_kappa[BENCH_WIDTH]; /* vector mode directions */
static double value, tangent;
static bench_lanes v_tangent;          /* lane tangents of the vector call */
static double f_tangent[BENCH_WIDTH];  /* the same from scalar sweeps */

static void primal_call(void) {
  value = heat_objective(NX, STEPS, R, u0, kappa);
  bench_sink = value;
}

static void grad_call(void) {
  memset(d_u0, 0, sizeof(double) * NX);
  memset(d_kappa, 0, sizeof(double) * NX);
#if BENCH_HAVE_AD
  __enzyme_autodiff((void *)heat_objective, enzyme_const, NX, enzyme_const, STEPS, enzyme_const, R,
                    enzyme_dup, u0, d_u0, enzyme_dup, kappa, d_kappa);
#endif
  bench_sink = d_u0[0] + d_kappa[0];
}

static void fwd_call(void) {
#if BENCH_HAVE_FWD
  tangent = __enzyme_fwddiff((void *)heat_objective, enzyme_const, NX, enzyme_const, STEPS, enzyme_const, R,
                             enzyme_dup, u0, t_u0, enzyme_dup, kappa, t_kappa);
#endif
  bench_sink = tangent;
}

/* KEPT is empty or BENCH_KEPT */
#define NXODY_SPLIT(KEPT)                                                                                     \
  void *tape = __enzyme_augmentfwd((void *)heat_objective, enzyme_const, NX, enzyme_const, STEPS,         \
                                   enzyme_const, R, KEPT KEPT enzyme_dup, u0, s_u0,  \
                                   KEPT enzyme_dup, kappa, s_kappa);                                            \
  __enzyme_reverse((void *)heat_objective, enzyme_const, NX, enzyme_const, STEPS, enzyme_const, R,       \
                   KEPT KEPT enzyme_dup, u0, s_u0, KEPT enzyme_dup, kappa, s_kappa, 1.0, tape)

static void split_zero(void) {
  memset(s_u0, 0, sizeof(double) * NX);
  memset(s_kappa, 0, sizeof(double) * NX);
}

static void split_call(void) {
  split_zero();
#if BENCH_HAVE_SPLIT
  NXODY_SPLIT();
#endif
  bench_sink = s_u0[0] + s_kappa[0];
}

static void split_kept_call(void) {
  split_zero();
#if BENCH_HAVE_SPLIT
  NXODY_SPLIT(BENCH_KEPT);
#endif
  bench_sink = s_u0[0] + s_kappa[0];
}

/* Vector forward mode: four directions in one call, against four scalar sweeps. */
static void vec4_call(void) {
#if BENCH_HAVE_VEC
  v_tangent = __enzyme_fwddiff_lanes((void *)heat_objective, enzyme_width, BENCH_WIDTH,
                                     enzyme_const, NX, enzyme_const, STEPS, enzyme_const, R,
                                     enzyme_dup, u0, v_u0[0], v_u0[1], v_u0[2], v_u0[3],
                                     enzyme_dup, kappa, v_kappa[0], v_kappa[1], v_kappa[2], v_kappa[3]);
#endif
  bench_sink = v_tangent.d[BENCH_WIDTH - 1];
}

static void fwd4_call(void) {
#if BENCH_HAVE_VEC
  for (int k = 0; k < BENCH_WIDTH; k++)
    f_tangent[k] = __enzyme_fwddiff((void *)heat_objective, enzyme_const, NX, enzyme_const, STEPS,
                                    enzyme_const, R,
                                    enzyme_dup, u0, v_u0[k], enzyme_dup, kappa, v_kappa[k]);
#endif
  bench_sink = f_tangent[BENCH_WIDTH - 1];
}

/* The hand-written adjoint (expert line), when the variant provides one: the same zeroing as
 * grad_call, then heat_expert_gradient accumulates into the same shadows. */
#ifdef BENCH_EXPERT
static void expert_call(void) {
  memset(d_u0, 0, sizeof(double) * NX);
  memset(d_kappa, 0, sizeof(double) * NX);
  heat_expert_gradient(NX, STEPS, R, u0, kappa, d_u0, d_kappa);
  bench_sink = d_u0[0] + d_kappa[0];
}
#define HEAT_HAVE_EXPERT 1
#else
static void expert_call(void) {}
#define HEAT_HAVE_EXPERT 0
#endif

static double objective(void) { primal_call(); return value; }

int main(int argc, char **argv) {
  struct bench_opts o = bench_parse(argc, argv);
  if (o.quick) { NX = 200; STEPS = 50; }
  if (o.size) NX = (int)o.size; /* --size: grid points */
  long nx = NX;
  u0 = malloc(sizeof(double) * nx); d_u0 = malloc(sizeof(double) * nx);
  kappa = malloc(sizeof(double) * nx); d_kappa = malloc(sizeof(double) * nx);
  t_u0 = malloc(sizeof(double) * nx); s_u0 = malloc(sizeof(double) * nx);
  t_kappa = malloc(sizeof(double) * nx); s_kappa = malloc(sizeof(double) * nx);
  bench_seed(6);
  bench_fill(u0, nx, -1, 1);
  bench_fill(kappa, nx, 0.5, 1.2);
  bench_fill(t_u0, nx, -1, 1);
  bench_fill(t_kappa, nx, -0.1, 0.1);
  bench_alloc_lanes(v_u0, nx, -1, 1);
  bench_alloc_lanes(v_kappa, nx, -0.1, 0.1);

  if (BENCH_HAVE_AD) {
    grad_call();
    double *gu = bench_copy(d_u0, nx), *gk = bench_copy(d_kappa, nx);
    bench_check_spread("u0", objective, u0, gu, nx, 5, 1e-5);
    bench_check_spread("kappa", objective, kappa, gk, nx, 5, 1e-5);
    bench_dump(&o, "u0", gu, nx);
    bench_dump(&o, "kappa", gk, nx);
    if (HEAT_HAVE_EXPERT) { /* the hand-written adjoint must agree with ours to rounding */
      expert_call();
      bench_check_all("expert.u0", d_u0, gu, nx, 1e-9);
      bench_check_all("expert.kappa", d_kappa, gk, nx, 1e-9);
    }
    /* forward mode: the tangent must equal the gradient along the direction */
    bench_mode = BENCH_FORWARD;
    if (BENCH_HAVE_FWD) {
      fwd_call();
      bench_check("tangent", 0, tangent, bench_dot(gu, t_u0, nx) + bench_dot(gk, t_kappa, nx), 1e-8);
    }
    bench_mode = BENCH_SPLIT;
    if (BENCH_HAVE_SPLIT) {
      for (int kept = 0; kept < 2; kept++) {
        if (kept) split_kept_call(); else split_call();
        bench_check_all("u0", s_u0, gu, nx, 1e-10);
        bench_check_all("kappa", s_kappa, gk, nx, 1e-10);
      }
    }
    /* vector mode: lanes equal the scalar sweeps, and each sweep the gradient along its direction */
    bench_mode = BENCH_VECTOR;
    if (BENCH_HAVE_VEC) {
      fwd4_call();
      vec4_call();
      for (int k = 0; k < BENCH_WIDTH; k++) {
        bench_check("tangent.lane", k, v_tangent.d[k], f_tangent[k], BENCH_LANE_RTOL);
        bench_check("sweep", k, f_tangent[k], bench_dot(gu, v_u0[k], nx) + bench_dot(gk, v_kappa[k], nx), 1e-8);
      }
    }
    free(gu); free(gk);
  }
  struct bench_case cases[8];
  int ncases = 0;
  bench_add(cases, &ncases, 1, "primal", primal_call);
  bench_add(cases, &ncases, BENCH_HAVE_AD, "grad", grad_call);
  bench_add(cases, &ncases, HEAT_HAVE_EXPERT, "expert", expert_call);
  bench_add(cases, &ncases, BENCH_HAVE_FWD, "fwd", fwd_call);
  bench_add(cases, &ncases, BENCH_HAVE_SPLIT, "split", split_call);
  bench_add(cases, &ncases, BENCH_HAVE_SPLIT, "split_kept", split_kept_call);
  bench_add(cases, &ncases, BENCH_HAVE_VEC, "vec4", vec4_call);
  bench_add(cases, &ncases, BENCH_HAVE_VEC, "fwd4", fwd4_call);
  bench_measure(cases, ncases, o);
  char size[64];
  snprintf(size, sizeof size, "nx%d_steps%d", NX, STEPS);
  return bench_report(BENCH_KERNEL, size, objective(), cases, ncases);
}
