/* ADBench LSTM objective: a stacked LSTM with diagonal (element-wise) weights predicts
 * each next character of a sequence; loss = mean negative log-softmax of the truth.
 * Gradient w.r.t. the main (per-layer gate) parameters and the extra (in/out) parameters. */
#include "bench.h"

static double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

/* log(sum(exp(v))) with the max shifted out */
static double logsumexp(const double *v, int n) {
  double mx = v[0];
  for (int i = 1; i < n; i++) if (v[i] > mx) mx = v[i];
  double s = 0;
  for (int i = 0; i < n; i++) s += exp(v[i] - mx);
  return log(s) + mx;
}

/* One layer, one step. weight/bias hold 4 blocks of h: forget, input, output gate, change. */
static void lstm_model(int h, const double *weight, const double *bias, double *hidden,
                       double *cell, const double *input) {
  for (int i = 0; i < h; i++) {
    double forget = sigmoid(input[i] * weight[i] + bias[i]);
    double ingate = sigmoid(hidden[i] * weight[h + i] + bias[h + i]);
    double outgate = sigmoid(input[i] * weight[2 * h + i] + bias[2 * h + i]);
    double change = tanh(hidden[i] * weight[3 * h + i] + bias[3 * h + i]);
    cell[i] = cell[i] * forget + ingate * change;
    hidden[i] = outgate * tanh(cell[i]);
  }
}

/* Runs all layers on one input; state holds (hidden, cell) per layer. */
static void lstm_predict(int l, int b, const double *main_params, const double *extra_params,
                         double *state, const double *input, double *x2, double *ypred) {
  for (int i = 0; i < b; i++) x2[i] = input[i] * extra_params[i];
  const double *xp = x2;
  for (int layer = 0; layer < l; layer++) {
    double *hidden = state + 2 * layer * b, *cell = state + (2 * layer + 1) * b;
    lstm_model(b, main_params + 2 * layer * 4 * b, main_params + (2 * layer + 1) * 4 * b, hidden, cell, xp);
    xp = hidden;
  }
  for (int i = 0; i < b; i++) ypred[i] = xp[i] * extra_params[b + i] + extra_params[2 * b + i];
}

void lstm_objective(int l, int c, int b, const double *main_params, const double *extra_params,
                    double *state, const double *sequence, double *loss) {
  double *x2 = malloc(sizeof(double) * b);
  double *ypred = malloc(sizeof(double) * b);
  double total = 0;
  const double *input = sequence;
  for (int t = 0; t < c - 1; t++) {
    lstm_predict(l, b, main_params, extra_params, state, input, x2, ypred);
    double lse = logsumexp(ypred, b);
    const double *ygold = sequence + (t + 1) * b;
    for (int i = 0; i < b; i++) total += ygold[i] * (ypred[i] - lse);
    input = ygold;
  }
  *loss = -total / ((c - 1) * b);
  free(x2); free(ypred);
}

/* ---- problem instance and timed calls ---- */
static int L = 2, C = 1024, B = 14;
static double *main_params, *extra_params, *state0, *state, *sequence;
static double *d_main, *d_extra, *d_state;
static double loss, d_loss;

/* The objective updates the state in place, so every call starts from the same copy. */
static void primal_call(void) {
  memcpy(state, state0, sizeof(double) * 2 * L * B);
  lstm_objective(L, C, B, main_params, extra_params, state, sequence, &loss);
  bench_sink = loss;
}

static void grad_call(void) {
  memcpy(state, state0, sizeof(double) * 2 * L * B);
  memset(d_main, 0, sizeof(double) * 2 * L * 4 * B);
  memset(d_extra, 0, sizeof(double) * 3 * B);
  memset(d_state, 0, sizeof(double) * 2 * L * B);
  d_loss = 1.0;
#if BENCH_HAVE_AD
  __enzyme_autodiff((void *)lstm_objective, enzyme_const, L, enzyme_const, C, enzyme_const, B,
                    enzyme_dup, main_params, d_main, enzyme_dup, extra_params, d_extra,
                    enzyme_dup, state, d_state, enzyme_const, sequence, enzyme_dup, &loss, &d_loss);
#endif
  bench_sink = d_main[0] + d_extra[0];
}

static double objective(void) { primal_call(); return loss; }

int main(int argc, char **argv) {
  struct bench_opts o = bench_parse(argc, argv);
  if (o.quick) C = 64;
  long n_main = 2L * L * 4 * B, n_extra = 3L * B, n_state = 2L * L * B;
  main_params = malloc(sizeof(double) * n_main); d_main = malloc(sizeof(double) * n_main);
  extra_params = malloc(sizeof(double) * n_extra); d_extra = malloc(sizeof(double) * n_extra);
  state0 = malloc(sizeof(double) * n_state); state = malloc(sizeof(double) * n_state);
  d_state = malloc(sizeof(double) * n_state);
  sequence = malloc(sizeof(double) * C * B);
  bench_seed(2);
  bench_fill(main_params, n_main, -1, 1);
  bench_fill(extra_params, n_extra, -1, 1);
  bench_fill(state0, n_state, -1, 1);
  /* a one-hot "text": each step is a character out of B */
  for (long i = 0; i < (long)C * B; i++) sequence[i] = 0;
  for (int t = 0; t < C; t++) sequence[t * B + (int)(bench_uniform() * B)] = 1;

  if (BENCH_HAVE_AD) {
    grad_call();
    double *gm = malloc(sizeof(double) * n_main), *ge = malloc(sizeof(double) * n_extra);
    memcpy(gm, d_main, sizeof(double) * n_main);
    memcpy(ge, d_extra, sizeof(double) * n_extra);
    bench_check_spread("main_params", objective, main_params, gm, n_main, 6, 1e-5);
    bench_check_spread("extra_params", objective, extra_params, ge, n_extra, 4, 1e-5);
    free(gm); free(ge);
  }
  struct bench_case cases[] = {{.label = "primal", .fn = primal_call}, {.label = "grad", .fn = grad_call}};
  bench_measure(cases, BENCH_HAVE_AD ? 2 : 1, o);
  char size[64];
  snprintf(size, sizeof size, "l%d_c%d_b%d", L, C, B);
  return bench_report("lstm", size, objective(), cases, BENCH_HAVE_AD ? 2 : 1);
}
