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

#define BENCH_KERNEL "lstm"
#include "harness/lstm.h"
