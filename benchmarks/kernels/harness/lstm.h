/* The LSTM harness every lstm variant shares: problem instance, timed calls of each mode,
 * checks and main(). Included at the end of a variant file, after the objective it defines;
 * BENCH_KERNEL names the variant in the RESULT line. */
#ifndef BENCH_KERNEL
#error define BENCH_KERNEL (the variant's name) before including this harness
#endif

static int L = 2, C = 1024, B = 14;
static double *main_params, *extra_params, *state0, *state, *sequence;
static double *d_main, *d_extra, *d_state;
static double *t_main, *t_extra, *t_state; /* forward mode: direction (the state's is 0) */
static double *s_main, *s_extra, *s_state; /* split mode shadows */
static double *v_main[BENCH_WIDTH], *v_extra[BENCH_WIDTH]; /* vector mode directions */
static double *v_state[BENCH_WIDTH];                        /* state shadows per lane (start at 0) */
static double loss, d_loss, t_loss, s_loss;
static double v_loss[BENCH_WIDTH], f_loss[BENCH_WIDTH]; /* lane tangents; the same from scalar sweeps */
static long n_main, n_extra, n_state;

/* The objective updates the state in place, so every call starts from the same copy. */
static void primal_call(void) {
  memcpy(state, state0, sizeof(double) * n_state);
  lstm_objective(L, C, B, main_params, extra_params, state, sequence, &loss);
  bench_sink = loss;
}

static void grad_call(void) {
  memcpy(state, state0, sizeof(double) * n_state);
  memset(d_main, 0, sizeof(double) * n_main);
  memset(d_extra, 0, sizeof(double) * n_extra);
  memset(d_state, 0, sizeof(double) * n_state);
  d_loss = 1.0;
#if BENCH_HAVE_AD
  __enzyme_autodiff((void *)lstm_objective, enzyme_const, L, enzyme_const, C, enzyme_const, B,
                    enzyme_dup, main_params, d_main, enzyme_dup, extra_params, d_extra,
                    enzyme_dup, state, d_state, enzyme_const, sequence, enzyme_dup, &loss, &d_loss);
#endif
  bench_sink = d_main[0] + d_extra[0];
}

static void fwd_call(void) {
  memcpy(state, state0, sizeof(double) * n_state);
  memset(t_state, 0, sizeof(double) * n_state);
  t_loss = 0;
#if BENCH_HAVE_FWD
  __enzyme_fwddiff_void((void *)lstm_objective, enzyme_const, L, enzyme_const, C, enzyme_const, B,
                        enzyme_dup, main_params, t_main, enzyme_dup, extra_params, t_extra,
                        enzyme_dup, state, t_state, enzyme_const, sequence, enzyme_dup, &loss, &t_loss);
#endif
  bench_sink = t_loss;
}

/* the seed is written between the two calls; KEPT is empty or BENCH_KEPT */
#define LSTM_SPLIT(KEPT)                                                                                           \
  void *tape = __enzyme_augmentfwd((void *)lstm_objective, enzyme_const, L, enzyme_const, C, enzyme_const, B,      \
                                   KEPT enzyme_dup, main_params, s_main, KEPT enzyme_dup, extra_params, s_extra,   \
                                   KEPT enzyme_dup, state, s_state, KEPT enzyme_const, sequence,                   \
                                   KEPT enzyme_dup, &loss, &s_loss);                                               \
  s_loss = 1.0;                                                                                                    \
  __enzyme_reverse((void *)lstm_objective, enzyme_const, L, enzyme_const, C, enzyme_const, B,                      \
                   KEPT enzyme_dup, main_params, s_main, KEPT enzyme_dup, extra_params, s_extra,                   \
                   KEPT enzyme_dup, state, s_state, KEPT enzyme_const, sequence, KEPT enzyme_dup, &loss, &s_loss,  \
                   tape)

static void split_zero(void) {
  memcpy(state, state0, sizeof(double) * n_state);
  memset(s_main, 0, sizeof(double) * n_main);
  memset(s_extra, 0, sizeof(double) * n_extra);
  memset(s_state, 0, sizeof(double) * n_state);
  s_loss = 0;
}

static void split_call(void) {
  split_zero();
#if BENCH_HAVE_SPLIT
  LSTM_SPLIT();
#endif
  bench_sink = s_main[0] + s_extra[0];
}

static void split_kept_call(void) {
  split_zero();
#if BENCH_HAVE_SPLIT
  LSTM_SPLIT(BENCH_KEPT);
#endif
  bench_sink = s_main[0] + s_extra[0];
}

/* Vector forward mode: four directions in one call, against four scalar sweeps (each of
 * which restores the state and zeroes its shadow, as the vector call does once). */
static void vec4_call(void) {
  memcpy(state, state0, sizeof(double) * n_state);
  bench_zero_lanes(v_state, n_state);
  memset(v_loss, 0, sizeof v_loss);
#if BENCH_HAVE_VEC
  __enzyme_fwddiff_void((void *)lstm_objective, enzyme_width, BENCH_WIDTH,
                        enzyme_const, L, enzyme_const, C, enzyme_const, B,
                        enzyme_dup, main_params, v_main[0], v_main[1], v_main[2], v_main[3],
                        enzyme_dup, extra_params, v_extra[0], v_extra[1], v_extra[2], v_extra[3],
                        enzyme_dup, state, v_state[0], v_state[1], v_state[2], v_state[3],
                        enzyme_const, sequence, enzyme_dup, &loss, &v_loss[0], &v_loss[1], &v_loss[2], &v_loss[3]);
#endif
  bench_sink = v_loss[BENCH_WIDTH - 1];
}

static void fwd4_call(void) {
  memset(f_loss, 0, sizeof f_loss);
#if BENCH_HAVE_VEC
  for (int k = 0; k < BENCH_WIDTH; k++) {
    memcpy(state, state0, sizeof(double) * n_state);
    memset(t_state, 0, sizeof(double) * n_state);
    __enzyme_fwddiff_void((void *)lstm_objective, enzyme_const, L, enzyme_const, C, enzyme_const, B,
                          enzyme_dup, main_params, v_main[k], enzyme_dup, extra_params, v_extra[k],
                          enzyme_dup, state, t_state, enzyme_const, sequence, enzyme_dup, &loss, &f_loss[k]);
  }
#endif
  bench_sink = f_loss[BENCH_WIDTH - 1];
}

static double objective(void) { primal_call(); return loss; }

int main(int argc, char **argv) {
  struct bench_opts o = bench_parse(argc, argv);
  if (o.quick) C = 64;
  n_main = 2L * L * 4 * B; n_extra = 3L * B; n_state = 2L * L * B;
  main_params = malloc(sizeof(double) * n_main); d_main = malloc(sizeof(double) * n_main);
  extra_params = malloc(sizeof(double) * n_extra); d_extra = malloc(sizeof(double) * n_extra);
  state0 = malloc(sizeof(double) * n_state); state = malloc(sizeof(double) * n_state);
  d_state = malloc(sizeof(double) * n_state);
  t_main = malloc(sizeof(double) * n_main); s_main = malloc(sizeof(double) * n_main);
  t_extra = malloc(sizeof(double) * n_extra); s_extra = malloc(sizeof(double) * n_extra);
  t_state = malloc(sizeof(double) * n_state); s_state = malloc(sizeof(double) * n_state);
  sequence = malloc(sizeof(double) * C * B);
  bench_seed(2);
  bench_fill(main_params, n_main, -1, 1);
  bench_fill(extra_params, n_extra, -1, 1);
  bench_fill(state0, n_state, -1, 1);
  /* a one-hot "text": each step is a character out of B */
  for (long i = 0; i < (long)C * B; i++) sequence[i] = 0;
  for (int t = 0; t < C; t++) sequence[t * B + (int)(bench_uniform() * B)] = 1;
  bench_fill(t_main, n_main, -1, 1);
  bench_fill(t_extra, n_extra, -1, 1);
  bench_alloc_lanes(v_main, n_main, -1, 1);
  bench_alloc_lanes(v_extra, n_extra, -1, 1);
  bench_alloc_lanes(v_state, n_state, 0, 0);

  if (BENCH_HAVE_AD) {
    grad_call();
    double *gm = bench_copy(d_main, n_main), *ge = bench_copy(d_extra, n_extra);
    bench_check_spread("main_params", objective, main_params, gm, n_main, 6, 1e-5);
    bench_check_spread("extra_params", objective, extra_params, ge, n_extra, 4, 1e-5);
    /* forward mode: the tangent must equal the gradient along the direction */
    bench_mode = BENCH_FORWARD;
    if (BENCH_HAVE_FWD) {
      fwd_call();
      bench_check("tangent", 0, t_loss, bench_dot(gm, t_main, n_main) + bench_dot(ge, t_extra, n_extra), 1e-8);
    }
    bench_mode = BENCH_SPLIT;
    if (BENCH_HAVE_SPLIT) {
      for (int kept = 0; kept < 2; kept++) {
        if (kept) split_kept_call(); else split_call();
        bench_check_all("main_params", s_main, gm, n_main, 1e-10);
        bench_check_all("extra_params", s_extra, ge, n_extra, 1e-10);
      }
    }
    /* vector mode: lanes equal the scalar sweeps, and each sweep the gradient along its direction */
    bench_mode = BENCH_VECTOR;
    if (BENCH_HAVE_VEC) {
      fwd4_call();
      vec4_call();
      for (int k = 0; k < BENCH_WIDTH; k++) {
        bench_check("tangent.lane", k, v_loss[k], f_loss[k], BENCH_LANE_RTOL);
        bench_check("sweep", k, f_loss[k], bench_dot(gm, v_main[k], n_main) + bench_dot(ge, v_extra[k], n_extra), 1e-8);
      }
    }
    free(gm); free(ge);
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
  snprintf(size, sizeof size, "l%d_c%d_b%d", L, C, B);
  return bench_report(BENCH_KERNEL, size, objective(), cases, ncases);
}
