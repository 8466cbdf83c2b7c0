/* LSTM objective with `restrict` pointers and the per-step predictions kept for the whole
 * sequence (a (c-1) x b matrix, loss reduced in a second pass at the end), as code that
 * separates the model from the loss often does. */
#include "bench.h"

static inline double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

static void lstm_cell(int h, const double *restrict weight, const double *restrict bias,
                      double *restrict hidden, double *restrict cell, const double *restrict input) {
  for (int i = 0; i < h; i++) {
    double forget = sigmoid(input[i] * weight[i] + bias[i]);
    double ingate = sigmoid(hidden[i] * weight[h + i] + bias[h + i]);
    double outgate = sigmoid(input[i] * weight[2 * h + i] + bias[2 * h + i]);
    double change = tanh(hidden[i] * weight[3 * h + i] + bias[3 * h + i]);
    cell[i] = cell[i] * forget + ingate * change;
    hidden[i] = outgate * tanh(cell[i]);
  }
}

void lstm_objective(int l, int c, int b, const double *restrict main_params, const double *restrict extra_params,
                    double *restrict state, const double *restrict sequence, double *restrict loss) {
  double *restrict preds = malloc(sizeof(double) * (c - 1) * b);
  double *restrict x2 = malloc(sizeof(double) * b);
  for (int t = 0; t < c - 1; t++) {
    for (int i = 0; i < b; i++) x2[i] = sequence[t * b + i] * extra_params[i];
    const double *xp = x2;
    for (int layer = 0; layer < l; layer++) {
      lstm_cell(b, main_params + 2 * layer * 4 * b, main_params + (2 * layer + 1) * 4 * b,
                state + 2 * layer * b, state + (2 * layer + 1) * b, xp);
      xp = state + 2 * layer * b;
    }
    for (int i = 0; i < b; i++) preds[t * b + i] = xp[i] * extra_params[b + i] + extra_params[2 * b + i];
  }
  double total = 0;
  for (int t = 0; t < c - 1; t++) {
    const double *restrict y = preds + t * b;
    double mx = y[0], s = 0;
    for (int i = 1; i < b; i++) if (y[i] > mx) mx = y[i];
    for (int i = 0; i < b; i++) s += exp(y[i] - mx);
    double lse = log(s) + mx;
    for (int i = 0; i < b; i++) total += sequence[(t + 1) * b + i] * (y[i] - lse);
  }
  *loss = -total / ((c - 1) * b);
  free(preds); free(x2);
}

#define BENCH_KERNEL "lstm_restrict"
#include "harness/lstm.h"
