/* The augmented forward pass and the reverse pass of the same function requested from
 * two different translation units; the tape crosses between them. */
#include "hcheck.h"
#include <string.h>
double model(const double *w, const double *x, int n);
void *run_forward(const double *w, double *dw, const double *x, int n);
void run_backward(const double *w, double *dw, const double *x, int n, double seed, void *tape);
int main(void) {
  enum { N = 5 };
  double w[N] = {0.3, -0.2, 0.5, 0.8, -0.6}, dw[N] = {0}, x[N] = {1, 2, -1, 0.5, 0.25};
  void *t = run_forward(w, dw, x, N);
  run_backward(w, dw, x, N, 2.0, t);
  for (int i = 0; i < N; i++) {
    double wp[N], wm[N], h = hc_h(w[i]);
    memcpy(wp, w, sizeof wp); memcpy(wm, w, sizeof wm);
    wp[i] += h; wm[i] -= h;
    hc_near("dw", dw[i], 2.0 * (model(wp, x, N) - model(wm, x, N)) / (2 * h), 1e-6);
  }
  return hc_done();
}
