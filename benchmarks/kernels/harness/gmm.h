/* The GMM harness every gmm variant shares: problem instance, timed calls of each mode,
 * checks and main(). Included at the end of a variant file, after the objective it defines;
 * BENCH_KERNEL names the variant in the RESULT line. */
#ifndef BENCH_KERNEL
#error define BENCH_KERNEL (the variant's name) before including this harness
#endif

static int D = 10, K = 25, N = 1000;
static const double GAMMA = 1.0;
static const int WISHART_M = 0;
static double *alphas, *means, *icf, *xs, *d_alphas, *d_means, *d_icf;
static double *t_alphas, *t_means, *t_icf; /* forward mode: one direction for all parameters */
static double *s_alphas, *s_means, *s_icf; /* split mode shadows */
static double *v_alphas[BENCH_WIDTH], *v_means[BENCH_WIDTH], *v_icf[BENCH_WIDTH]; /* vector mode directions */
static double err, d_err, t_err, s_err;
static double v_err[BENCH_WIDTH], f_err[BENCH_WIDTH]; /* lane tangents; the same from scalar sweeps */

static long icf_count(void) { return (long)K * D * (D + 1) / 2; }

static void primal_call(void) {
  gmm_objective(D, K, N, alphas, means, icf, xs, GAMMA, WISHART_M, &err);
  bench_sink = err;
}

static void grad_call(void) {
  memset(d_alphas, 0, sizeof(double) * K);
  memset(d_means, 0, sizeof(double) * K * D);
  memset(d_icf, 0, sizeof(double) * icf_count());
  d_err = 1.0;
#if BENCH_HAVE_AD
  __enzyme_autodiff((void *)gmm_objective, enzyme_const, D, enzyme_const, K, enzyme_const, N,
                    enzyme_dup, alphas, d_alphas, enzyme_dup, means, d_means, enzyme_dup, icf, d_icf,
                    enzyme_const, xs, enzyme_const, GAMMA, enzyme_const, WISHART_M,
                    enzyme_dup, &err, &d_err);
#endif
  bench_sink = d_alphas[0] + d_means[0] + d_icf[0];
}

static void fwd_call(void) {
  t_err = 0;
#if BENCH_HAVE_FWD
  __enzyme_fwddiff_void((void *)gmm_objective, enzyme_const, D, enzyme_const, K, enzyme_const, N,
                        enzyme_dup, alphas, t_alphas, enzyme_dup, means, t_means, enzyme_dup, icf, t_icf,
                        enzyme_const, xs, enzyme_const, GAMMA, enzyme_const, WISHART_M,
                        enzyme_dup, &err, &t_err);
#endif
  bench_sink = t_err;
}

/* the seed is written between the two calls; KEPT is empty or BENCH_KEPT */
#define GMM_SPLIT(KEPT)                                                                                      \
  void *tape = __enzyme_augmentfwd((void *)gmm_objective, enzyme_const, D, enzyme_const, K, enzyme_const, N, \
                                   KEPT enzyme_dup, alphas, s_alphas, KEPT enzyme_dup, means, s_means,       \
                                   KEPT enzyme_dup, icf, s_icf, KEPT enzyme_const, xs, enzyme_const, GAMMA,  \
                                   enzyme_const, WISHART_M, KEPT enzyme_dup, &err, &s_err);                  \
  s_err = 1.0;                                                                                               \
  __enzyme_reverse((void *)gmm_objective, enzyme_const, D, enzyme_const, K, enzyme_const, N,                 \
                   KEPT enzyme_dup, alphas, s_alphas, KEPT enzyme_dup, means, s_means,                       \
                   KEPT enzyme_dup, icf, s_icf, KEPT enzyme_const, xs, enzyme_const, GAMMA,                  \
                   enzyme_const, WISHART_M, KEPT enzyme_dup, &err, &s_err, tape)

static void split_zero(void) {
  memset(s_alphas, 0, sizeof(double) * K);
  memset(s_means, 0, sizeof(double) * K * D);
  memset(s_icf, 0, sizeof(double) * icf_count());
  s_err = 0;
}

static void split_call(void) {
  split_zero();
#if BENCH_HAVE_SPLIT
  GMM_SPLIT();
#endif
  bench_sink = s_alphas[0] + s_means[0] + s_icf[0];
}

static void split_kept_call(void) {
  split_zero();
#if BENCH_HAVE_SPLIT
  GMM_SPLIT(BENCH_KEPT);
#endif
  bench_sink = s_alphas[0] + s_means[0] + s_icf[0];
}

/* Vector forward mode: four directions in one call, against four scalar sweeps. */
static void vec4_call(void) {
  memset(v_err, 0, sizeof v_err);
#if BENCH_HAVE_VEC
  __enzyme_fwddiff_void((void *)gmm_objective, enzyme_width, BENCH_WIDTH,
                        enzyme_const, D, enzyme_const, K, enzyme_const, N,
                        enzyme_dup, alphas, v_alphas[0], v_alphas[1], v_alphas[2], v_alphas[3],
                        enzyme_dup, means, v_means[0], v_means[1], v_means[2], v_means[3],
                        enzyme_dup, icf, v_icf[0], v_icf[1], v_icf[2], v_icf[3],
                        enzyme_const, xs, enzyme_const, GAMMA, enzyme_const, WISHART_M,
                        enzyme_dup, &err, &v_err[0], &v_err[1], &v_err[2], &v_err[3]);
#endif
  bench_sink = v_err[BENCH_WIDTH - 1];
}

static void fwd4_call(void) {
  memset(f_err, 0, sizeof f_err);
#if BENCH_HAVE_VEC
  for (int k = 0; k < BENCH_WIDTH; k++)
    __enzyme_fwddiff_void((void *)gmm_objective, enzyme_const, D, enzyme_const, K, enzyme_const, N,
                          enzyme_dup, alphas, v_alphas[k], enzyme_dup, means, v_means[k], enzyme_dup, icf, v_icf[k],
                          enzyme_const, xs, enzyme_const, GAMMA, enzyme_const, WISHART_M,
                          enzyme_dup, &err, &f_err[k]);
#endif
  bench_sink = f_err[BENCH_WIDTH - 1];
}

/* The hand-written adjoint (expert line), when the variant provides one: the same zeroing and
 * seed as grad_call, then gmm_expert_gradient accumulates into the same shadows. */
#ifdef BENCH_EXPERT
static void expert_call(void) {
  memset(d_alphas, 0, sizeof(double) * K);
  memset(d_means, 0, sizeof(double) * K * D);
  memset(d_icf, 0, sizeof(double) * icf_count());
  gmm_expert_gradient(D, K, N, alphas, means, icf, xs, GAMMA, WISHART_M, d_alphas, d_means, d_icf);
  bench_sink = d_alphas[0] + d_means[0] + d_icf[0];
}
#define GMM_HAVE_EXPERT 1
#else
static void expert_call(void) {}
#define GMM_HAVE_EXPERT 0
#endif

static double objective(void) { primal_call(); return err; }

int main(int argc, char **argv) {
  struct bench_opts o = bench_parse(argc, argv);
  if (o.quick) { K = 5; N = 100; }
  if (o.size) N = (int)o.size; /* --size: number of data points */
  long nicf = icf_count();
  alphas = malloc(sizeof(double) * K); d_alphas = malloc(sizeof(double) * K);
  means = malloc(sizeof(double) * K * D); d_means = malloc(sizeof(double) * K * D);
  icf = malloc(sizeof(double) * nicf); d_icf = malloc(sizeof(double) * nicf);
  t_alphas = malloc(sizeof(double) * K); s_alphas = malloc(sizeof(double) * K);
  t_means = malloc(sizeof(double) * K * D); s_means = malloc(sizeof(double) * K * D);
  t_icf = malloc(sizeof(double) * nicf); s_icf = malloc(sizeof(double) * nicf);
  xs = malloc(sizeof(double) * N * D);
  bench_seed(1);
  bench_fill(alphas, K, -1, 1);
  bench_fill(means, K * D, 0, 1);
  bench_fill(icf, nicf, -0.5, 0.5);
  bench_fill(xs, N * D, 0, 1);
  bench_fill(t_alphas, K, -1, 1);
  bench_fill(t_means, K * D, -1, 1);
  bench_fill(t_icf, nicf, -1, 1);
  bench_alloc_lanes(v_alphas, K, -1, 1);
  bench_alloc_lanes(v_means, K * D, -1, 1);
  bench_alloc_lanes(v_icf, nicf, -1, 1);

  if (BENCH_HAVE_AD) {
    grad_call();
    double *ga = bench_copy(d_alphas, K), *gm = bench_copy(d_means, K * D), *gi = bench_copy(d_icf, nicf);
    bench_check_spread("alphas", objective, alphas, ga, K, 3, 1e-5);
    bench_check_spread("means", objective, means, gm, K * D, 4, 1e-5);
    bench_check_spread("icf", objective, icf, gi, nicf, 6, 1e-5);
    bench_dump(&o, "alphas", ga, K);
    bench_dump(&o, "means", gm, K * D);
    bench_dump(&o, "icf", gi, nicf);
    if (GMM_HAVE_EXPERT) { /* the hand-written adjoint must agree with ours to rounding */
      expert_call();
      bench_check_all("expert.alphas", d_alphas, ga, K, 1e-9);
      bench_check_all("expert.means", d_means, gm, K * D, 1e-9);
      bench_check_all("expert.icf", d_icf, gi, nicf, 1e-9);
    }
    /* forward mode: the tangent must equal the gradient along the direction */
    bench_mode = BENCH_FORWARD;
    if (BENCH_HAVE_FWD) {
      fwd_call();
      double want = bench_dot(ga, t_alphas, K) + bench_dot(gm, t_means, K * D) + bench_dot(gi, t_icf, nicf);
      bench_check("tangent", 0, t_err, want, 1e-8);
    }
    bench_mode = BENCH_SPLIT;
    if (BENCH_HAVE_SPLIT) {
      for (int kept = 0; kept < 2; kept++) {
        if (kept) split_kept_call(); else split_call();
        bench_check_all("alphas", s_alphas, ga, K, 1e-10);
        bench_check_all("means", s_means, gm, K * D, 1e-10);
        bench_check_all("icf", s_icf, gi, nicf, 1e-10);
      }
    }
    /* vector mode: lanes equal the scalar sweeps, and each sweep the gradient along its direction */
    bench_mode = BENCH_VECTOR;
    if (BENCH_HAVE_VEC) {
      fwd4_call();
      vec4_call();
      for (int k = 0; k < BENCH_WIDTH; k++) {
        bench_check("tangent.lane", k, v_err[k], f_err[k], BENCH_LANE_RTOL);
        double want = bench_dot(ga, v_alphas[k], K) + bench_dot(gm, v_means[k], K * D) + bench_dot(gi, v_icf[k], nicf);
        bench_check("sweep", k, f_err[k], want, 1e-8);
      }
    }
    free(ga); free(gm); free(gi);
  }
  struct bench_case cases[8];
  int ncases = 0;
  bench_add(cases, &ncases, 1, "primal", primal_call);
  bench_add(cases, &ncases, BENCH_HAVE_AD, "grad", grad_call);
  bench_add(cases, &ncases, GMM_HAVE_EXPERT, "expert", expert_call);
  bench_add(cases, &ncases, BENCH_HAVE_FWD, "fwd", fwd_call);
  bench_add(cases, &ncases, BENCH_HAVE_SPLIT, "split", split_call);
  bench_add(cases, &ncases, BENCH_HAVE_SPLIT, "split_kept", split_kept_call);
  bench_add(cases, &ncases, BENCH_HAVE_VEC, "vec4", vec4_call);
  bench_add(cases, &ncases, BENCH_HAVE_VEC, "fwd4", fwd4_call);
  bench_measure(cases, ncases, o);
  char size[64];
  snprintf(size, sizeof size, "d%d_K%d_n%d", D, K, N);
  return bench_report(BENCH_KERNEL, size, objective(), cases, ncases);
}
