/* LSTM objective as ADBench's original C code writes it: lstm_model allocates a fresh
 * `gates` array (4 blocks of h) per layer and step and runs three loops over it; the
 * prediction goes through a fresh ypred/ynorm pair per step and an arr_max-based logsumexp. */
#include "bench.h"

double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

double logsumexp(const double *vect, int sz) {
  double vmax = vect[0];
  for (int i = 1; i < sz; i++) if (vect[i] > vmax) vmax = vect[i];
  double sum = 0.0;
  for (int i = 0; i < sz; i++) sum += exp(vect[i] - vmax);
  return log(sum) + vmax;
}

void lstm_model(int hsize, const double *weight, const double *bias, double *hidden, double *cell,
                const double *input) {
  double *gates = malloc(4 * hsize * sizeof(double));
  double *forget = &gates[0], *ingate = &gates[hsize], *outgate = &gates[2 * hsize], *change = &gates[3 * hsize];
  for (int i = 0; i < hsize; i++) {
    forget[i] = sigmoid(input[i] * weight[i] + bias[i]);
    ingate[i] = sigmoid(hidden[i] * weight[hsize + i] + bias[hsize + i]);
    outgate[i] = sigmoid(input[i] * weight[2 * hsize + i] + bias[2 * hsize + i]);
    change[i] = tanh(hidden[i] * weight[3 * hsize + i] + bias[3 * hsize + i]);
  }
  for (int i = 0; i < hsize; i++) cell[i] = cell[i] * forget[i] + ingate[i] * change[i];
  for (int i = 0; i < hsize; i++) hidden[i] = outgate[i] * tanh(cell[i]);
  free(gates);
}

void lstm_predict(int l, int b, const double *w, const double *w2, double *s, const double *x, double *x2) {
  for (int i = 0; i < b; i++) x2[i] = x[i] * w2[i];
  double *xp = x2;
  for (int i = 0; i <= 2 * l * b - 1; i += 2 * b) {
    lstm_model(b, &w[i * 4], &w[(i + b) * 4], &s[i], &s[i + b], xp);
    xp = &s[i];
  }
  for (int i = 0; i < b; i++) x2[i] = xp[i] * w2[b + i] + w2[2 * b + i];
}

void lstm_objective(int l, int c, int b, const double *main_params, const double *extra_params,
                    double *state, const double *sequence, double *loss) {
  double total = 0.0;
  int count = 0;
  const double *input = &sequence[0];
  for (int t = 0; t <= (c - 1) * b - 1; t += b) {
    double *ypred = malloc(b * sizeof(double));
    double *ynorm = malloc(b * sizeof(double));
    lstm_predict(l, b, main_params, extra_params, state, input, ypred);
    double lse = logsumexp(ypred, b);
    for (int i = 0; i < b; i++) ynorm[i] = ypred[i] - lse;
    const double *ygold = &sequence[t + b];
    for (int i = 0; i < b; i++) total += ygold[i] * ynorm[i];
    count += b;
    input = ygold;
    free(ypred);
    free(ynorm);
  }
  *loss = -total / count;
}

#define BENCH_KERNEL "lstm_adbench"
#include "harness/lstm.h"
