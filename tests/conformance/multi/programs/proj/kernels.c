/* The model's primitive kernels (their derivatives are the user's rules in rules.c). */
#include <math.h>
#include "model.h"

double softclip(double x) { return x / (1.0 + fabs(x)); }

double dotw(const double *w, const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += w[i] * x[i];
  return s;
}
