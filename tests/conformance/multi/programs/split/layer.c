/* The layer: a private helper named like one in forward.c, and an inlined header helper. */
#include <math.h>
#include "layer.h"

int layer_calls;
static double helper(double a, double b) { return tanh(a * b) + sq(a) * 0.1; }

void layer(const double *x, const double *w, double *out, int n) {
  layer_calls++;
  for (int i = 0; i < n; i++) out[i] = helper(x[i], w[i]) + exp(-sq(x[(i + 1) % n]));
}
