/* The normalization harness every norm variant shares: problem instance, timed calls of each mode,
 * checks and main(). Included at the end of a variant file, after the objective it defines;
 * BENCH_KERNEL names the variant in the RESULT line. */
#ifndef BENCH_KERNEL
#error define BENCH_KERNEL (the variant's name) before including this harness
#endif

static int N = 20000;
static double *in, *out, *d_in, *d_out, *weights;
static double *t_in, *t_out; /* forward mode: input direction, output tangent */
static double *s_in, *s_out; /* split mode shadows */
static double *v_in[BENCH_WIDTH], *v_out[BENCH_WIDTH]; /* vector mode: directions, lane tangents */
static double *f_out[BENCH_WIDTH];                     /* the same directions, one scalar sweep each */

static void primal_call(void) {
  normalize(out, in, N);
  bench_sink = out[N - 1];
}

/* The output adjoint (weights) is consumed by the reverse pass, so it is re-seeded. */
static void grad_call(void) {
  memset(d_in, 0, sizeof(double) * N);
  memcpy(d_out, weights, sizeof(double) * N);
#if BENCH_HAVE_AD
  __enzyme_autodiff((void *)normalize, enzyme_dup, out, d_out, enzyme_dup, in, d_in, enzyme_const, N);
#endif
  bench_sink = d_in[N - 1];
}

static void fwd_call(void) {
#if BENCH_HAVE_FWD
  __enzyme_fwddiff_void((void *)normalize, enzyme_dup, out, t_out, enzyme_dup, in, t_in, enzyme_const, N);
#endif
  bench_sink = t_out[N - 1];
}

/* The seed arrives between the passes, as in a framework's forward/backward. */
/* the output adjoint is written between the two calls; KEPT is empty or BENCH_KEPT */
#define NORM_SPLIT(KEPT)                                                                                        \
  void *tape = __enzyme_augmentfwd((void *)normalize, KEPT enzyme_dup, out, s_out, KEPT enzyme_dup, in, s_in,  \
                                   enzyme_const, N);                                                           \
  memcpy(s_out, weights, sizeof(double) * N);                                                                  \
  __enzyme_reverse((void *)normalize, KEPT enzyme_dup, out, s_out, KEPT enzyme_dup, in, s_in, enzyme_const, N, tape)

static void split_call(void) {
  memset(s_in, 0, sizeof(double) * N);
  memset(s_out, 0, sizeof(double) * N);
#if BENCH_HAVE_SPLIT
  NORM_SPLIT();
#endif
  bench_sink = s_in[N - 1];
}

static void split_kept_call(void) {
  memset(s_in, 0, sizeof(double) * N);
  memset(s_out, 0, sizeof(double) * N);
#if BENCH_HAVE_SPLIT
  NORM_SPLIT(BENCH_KEPT);
#endif
  bench_sink = s_in[N - 1];
}

/* Vector forward mode: four directions in one call, against four scalar sweeps. */
static void vec4_call(void) {
#if BENCH_HAVE_VEC
  __enzyme_fwddiff_void((void *)normalize, enzyme_width, BENCH_WIDTH,
                        enzyme_dup, out, v_out[0], v_out[1], v_out[2], v_out[3],
                        enzyme_dup, in, v_in[0], v_in[1], v_in[2], v_in[3], enzyme_const, N);
#endif
  bench_sink = v_out[BENCH_WIDTH - 1][N - 1];
}

static void fwd4_call(void) {
#if BENCH_HAVE_VEC
  for (int k = 0; k < BENCH_WIDTH; k++)
    __enzyme_fwddiff_void((void *)normalize, enzyme_dup, out, f_out[k], enzyme_dup, in, v_in[k], enzyme_const, N);
#endif
  bench_sink = f_out[BENCH_WIDTH - 1][N - 1];
}

/* the scalar the gradient is of: sum_i w_i out_i */
static double objective(void) {
  primal_call();
  double s = 0;
  for (int i = 0; i < N; i++) s += weights[i] * out[i];
  return s;
}

int main(int argc, char **argv) {
  struct bench_opts o = bench_parse(argc, argv);
  if (o.quick) N = 1000;
  if (o.size) N = (int)o.size; /* --size: vector length */
  in = malloc(sizeof(double) * N); out = malloc(sizeof(double) * N);
  d_in = malloc(sizeof(double) * N); d_out = malloc(sizeof(double) * N);
  t_in = malloc(sizeof(double) * N); t_out = malloc(sizeof(double) * N);
  s_in = malloc(sizeof(double) * N); s_out = malloc(sizeof(double) * N);
  weights = malloc(sizeof(double) * N);
  bench_seed(5);
  bench_fill(in, N, -1, 1);
  bench_fill(weights, N, -1, 1);
  bench_fill(t_in, N, -1, 1);
  bench_alloc_lanes(v_in, N, -1, 1);
  bench_alloc_lanes(v_out, N, 0, 0);
  bench_alloc_lanes(f_out, N, 0, 0);

  if (BENCH_HAVE_AD) {
    grad_call();
    double *g = bench_copy(d_in, N);
    bench_check_spread("in", objective, in, g, N, 6, 1e-5);
    bench_dump(&o, "in", g, N);
    for (int i = 0; i < N; i++)
      if (d_out[i] != 0) { bench_check("d_out consumed", i, d_out[i], 0.0, 0.0); break; }
    /* forward mode: sum_i w_i tangent_out_i must equal the gradient along the direction */
    bench_mode = BENCH_FORWARD;
    if (BENCH_HAVE_FWD) { fwd_call(); bench_check("w . tangent", 0, bench_dot(weights, t_out, N), bench_dot(g, t_in, N), 1e-8); }
    bench_mode = BENCH_SPLIT;
    for (int kept = 0; BENCH_HAVE_SPLIT && kept < 2; kept++) {
      if (kept) split_kept_call(); else split_call();
      bench_check_all("gradient", s_in, g, N, 1e-10);
    }
    /* vector mode: lanes equal the scalar sweeps, and each sweep the gradient along its direction */
    bench_mode = BENCH_VECTOR;
    if (BENCH_HAVE_VEC) {
      fwd4_call();
      vec4_call();
      bench_check_lanes("tangent_out", v_out, f_out, N);
      for (int k = 0; k < BENCH_WIDTH; k++)
        bench_check("w . sweep", k, bench_dot(weights, f_out[k], N), bench_dot(g, v_in[k], N), 1e-8);
    }
    free(g);
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
  snprintf(size, sizeof size, "n%d", N);
  return bench_report(BENCH_KERNEL, size, objective(), cases, ncases);
}
