/* Split mode across TUs: tapes made in forward.c, consumed in backward.c, two alive at once;
 * plus vector forward mode of the same layer from this TU. */
#include "hcheck.h"
#include "layer.h"
typedef struct { double a, b; } two;
void __enzyme_fwddiffv(void *, ...);
#define N 5

static double fd_weighted(const double *x, const double *w, const double *seed, int i) {
  double xp[N], xm[N], op[N], om[N], h = hc_h(x[i]), s = 0;
  for (int k = 0; k < N; k++) xp[k] = xm[k] = x[k];
  xp[i] += h; xm[i] -= h;
  layer(xp, w, op, N); layer(xm, w, om, N);
  for (int k = 0; k < N; k++) s += seed[k] * (op[k] - om[k]) / (2 * h);
  return s;
}

int main(void) {
  double x1[N] = {0.2, -0.5, 0.9, 1.3, -1.1}, x2[N] = {1.0, 0.1, -0.3, 0.6, 0.4};
  double w[N] = {1.5, -0.7, 0.3, 2.0, 0.9};
  double o1[N], o2[N], d1[N] = {0}, d2[N] = {0}, do1[N] = {0}, do2[N] = {0}, s1[N], s2[N];
  layer_calls = 0;
  void *t1 = run_forward(x1, d1, w, o1, do1, N);
  void *t2 = run_forward(x2, d2, w, o2, do2, N);  /* two tapes alive at once */
  hc_near("primal once per augmented pass", layer_calls, 2, 0);
  for (int k = 0; k < N; k++) { s1[k] = do1[k] = 1.0 + k; s2[k] = do2[k] = (k % 2) ? -1.0 : 0.5; }
  run_backward(x2, d2, w, o2, do2, N, t2);  /* in the other order */
  run_backward(x1, d1, w, o1, do1, N, t1);
  hc_near("no primal in the reverse passes", layer_calls, 2, 0);
  for (int i = 0; i < N; i++) {
    hc_near("tape 1", d1[i], fd_weighted(x1, w, s1, i), 1e-6);
    hc_near("tape 2", d2[i], fd_weighted(x2, w, s2, i), 1e-6);
    hc_near("output shadow consumed", do1[i] + do2[i], 0.0, 0.0);
  }
  /* width 2 forward: directions e0 and e3 give columns 0 and 3 of the Jacobian */
  double e0[N] = {1, 0, 0, 0, 0}, e3[N] = {0, 0, 0, 1, 0}, out[N], c0[N] = {0}, c3[N] = {0};
  __enzyme_fwddiffv((void *)layer, enzyme_width, 2, enzyme_dup, x1, e0, e3, enzyme_const, w, enzyme_dup, out, c0, c3,
                    enzyme_const, N);
  double one[N];
  for (int k = 0; k < N; k++) {
    for (int q = 0; q < N; q++) one[q] = (q == k);
    hc_near("column 0", c0[k], fd_weighted(x1, w, one, 0), 1e-6);
    hc_near("column 3", c3[k], fd_weighted(x1, w, one, 3), 1e-6);
  }
  return hc_done();
}
