/* The function differentiated in split mode (its own translation unit). */
#include <math.h>
double model(const double *w, const double *x, int n) {
  double s = 0;
  int i = 0;
  while (i < n) { s += tanh(w[i] * x[i]) * (1 + 0.1 * i); i++; }
  return s * s;
}
