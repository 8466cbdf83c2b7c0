/* LSTM objective in one function: no sigmoid/logsumexp/model/predict helpers, the gate
 * arithmetic written where it is used, and the layer input carried in a stack array. */
#include "bench.h"

void lstm_objective(int l, int c, int b, const double *main_params, const double *extra_params,
                    double *state, const double *sequence, double *loss) {
  double *buf = malloc(sizeof(double) * 2 * b); /* layer input, then predictions */
  double *xin = buf, *ypred = buf + b;
  double total = 0;
  for (int t = 0; t < c - 1; t++) {
    const double *input = sequence + t * b;
    for (int i = 0; i < b; i++) xin[i] = input[i] * extra_params[i];
    for (int layer = 0; layer < l; layer++) {
      const double *w = main_params + 2 * layer * 4 * b, *bias = w + 4 * b;
      double *hidden = state + 2 * layer * b, *cell = hidden + b;
      for (int i = 0; i < b; i++) {
        double f = 1.0 / (1.0 + exp(-(xin[i] * w[i] + bias[i])));
        double g = 1.0 / (1.0 + exp(-(hidden[i] * w[b + i] + bias[b + i])));
        double o = 1.0 / (1.0 + exp(-(xin[i] * w[2 * b + i] + bias[2 * b + i])));
        double ch = tanh(hidden[i] * w[3 * b + i] + bias[3 * b + i]);
        cell[i] = cell[i] * f + g * ch;
        hidden[i] = o * tanh(cell[i]);
        xin[i] = hidden[i];
      }
    }
    double mx = -INFINITY;
    for (int i = 0; i < b; i++) {
      ypred[i] = xin[i] * extra_params[b + i] + extra_params[2 * b + i];
      if (ypred[i] > mx) mx = ypred[i];
    }
    double s = 0;
    for (int i = 0; i < b; i++) s += exp(ypred[i] - mx);
    double lse = log(s) + mx;
    const double *ygold = sequence + (t + 1) * b;
    for (int i = 0; i < b; i++) total += ygold[i] * (ypred[i] - lse);
  }
  *loss = -total / ((c - 1) * b);
  free(buf);
}

#define BENCH_KERNEL "lstm_inlined"
#include "harness/lstm.h"
