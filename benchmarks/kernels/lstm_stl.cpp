/* LSTM written in C++ with the standard library: each layer's hidden and cell state in a
 * std::vector member of a Layer struct (copied in from the flat state), the input scaling by
 * std::transform with a lambda, the log-sum-exp through std::max_element and
 * std::accumulate, the loss through std::inner_product. */
#include <algorithm>
#include <numeric>
#include <vector>
#include "bench.h"
namespace {
struct Layer { std::vector<double> hidden, cell; };
inline double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double logsumexp(const std::vector<double> &v) {
  double mx = *std::max_element(v.begin(), v.end());
  double s = std::accumulate(v.begin(), v.end(), 0.0, [mx](double a, double t) { return a + std::exp(t - mx); });
  return std::log(s) + mx;
}
}
void lstm_objective(int l, int c, int b, const double *main_params, const double *extra_params,
                    double *state, const double *sequence, double *loss) {
  std::vector<Layer> layers(l);
  for (int k = 0; k < l; k++) {
    layers[k].hidden.assign(state + 2 * k * b, state + 2 * k * b + b);
    layers[k].cell.assign(state + (2 * k + 1) * b, state + (2 * k + 1) * b + b);
  }
  std::vector<double> x(b), ypred(b);
  double total = 0;
  for (int t = 0; t < c - 1; t++) {
    const double *input = sequence + t * b;
    std::transform(input, input + b, extra_params, x.begin(), [](double a, double w) { return a * w; });
    const std::vector<double> *xp = &x;
    for (int k = 0; k < l; k++) {
      const double *w = main_params + 2 * k * 4 * b, *bias = main_params + (2 * k + 1) * 4 * b;
      Layer &L = layers[k];
      for (int i = 0; i < b; i++) {
        double in = (*xp)[i];
        double forget = sigmoid(in * w[i] + bias[i]);
        double ingate = sigmoid(L.hidden[i] * w[b + i] + bias[b + i]);
        double outgate = sigmoid(in * w[2 * b + i] + bias[2 * b + i]);
        double change = std::tanh(L.hidden[i] * w[3 * b + i] + bias[3 * b + i]);
        L.cell[i] = L.cell[i] * forget + ingate * change;
        L.hidden[i] = outgate * std::tanh(L.cell[i]);
      }
      xp = &L.hidden;
    }
    for (int i = 0; i < b; i++) ypred[i] = (*xp)[i] * extra_params[b + i] + extra_params[2 * b + i];
    double lse = logsumexp(ypred);
    const double *ygold = sequence + (t + 1) * b;
    total += std::inner_product(ygold, ygold + b, ypred.begin(), 0.0) - lse * std::accumulate(ygold, ygold + b, 0.0);
  }
  *loss = -total / ((c - 1) * b);
}
#define BENCH_KERNEL "lstm_stl"
#include "harness/lstm.h"
