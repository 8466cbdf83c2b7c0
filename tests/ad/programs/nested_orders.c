/* Nested AD to any order, through code that needs a tape: each level's derivative keeps
 * values of loops (static trip counts, data-dependent ones, a heap buffer) on its tape, and
 * the next level differentiates that tape code. Checked against closed forms and against
 * central differences of the level below. */
#include "adcheck.h"
#include <stdlib.h>
extern int enzyme_const, enzyme_dup, enzyme_out;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
void *__enzyme_augmentfwd(void *, ...);
double __enzyme_reverse(void *, ...);

/* x^k by a loop of n multiplications with a counted trip count: d^m/dx^m known */
double power(double x, int n) { double p = 1; for (int i = 0; i < n; i++) p *= x; return p; }
double power_1(double x, int n) { return __enzyme_autodiff((void *)power, x, enzyme_const, n); }
double power_2(double x, int n) { return __enzyme_autodiff((void *)power_1, x, enzyme_const, n); }
double power_3(double x, int n) { return __enzyme_autodiff((void *)power_2, x, enzyme_const, n); }
double power_4(double x, int n) { return __enzyme_autodiff((void *)power_3, x, enzyme_const, n); }

/* a recurrence through sin with a data-dependent trip count (the loop runs until a sum
 * passes a bound): taped values, no static record */
double orbit(double x, double bound) {
  double s = 0, y = x;
  int i = 0;
  while (s < bound && i < 10000) { y = sin(y) * x + 0.5; s += y * y; i++; }
  return s + y;
}
double orbit_1(double x, double b) { return __enzyme_autodiff((void *)orbit, x, enzyme_const, b); }
double orbit_2(double x, double b) { return __enzyme_autodiff((void *)orbit_1, x, enzyme_const, b); }
double orbit_3(double x, double b) { return __enzyme_autodiff((void *)orbit_2, x, enzyme_const, b); }
/* third order as forward over reverse over reverse, and reverse over forward */
double orbit_3f(double x, double b) { return __enzyme_fwddiff((void *)orbit_2, x, 1.0, enzyme_const, b); }
double orbit_1f(double x, double b) { return __enzyme_fwddiff((void *)orbit, x, 1.0, enzyme_const, b); }
double orbit_2rf(double x, double b) { return __enzyme_autodiff((void *)orbit_1f, x, enzyme_const, b); }

/* a gradient with a heap work array (malloc'd inside, freed inside) */
double energy(const double *x, int n) {
  double *t = malloc(n * sizeof *t);
  for (int i = 0; i < n; i++) t[i] = sin(x[i]) * x[(i + 1) % n];
  double e = 0;
  for (int i = 0; i < n; i++) e += t[i] * t[i] + t[i] * x[i];
  free(t);
  return e;
}
/* directional second derivative: v . grad(energy)(x), differentiated again (Hessian-vector) */
double grad_along(const double *x, const double *v, int n) {
  double *g = calloc(n, sizeof *g);
  __enzyme_autodiff((void *)energy, enzyme_dup, x, g, enzyme_const, n);
  double s = 0;
  for (int i = 0; i < n; i++) s += g[i] * v[i];
  free(g);
  return s;
}
/* the same through split mode inside: augmented forward, then reverse with the tape */
double grad_along_split(const double *x, const double *v, int n) {
  double *g = calloc(n, sizeof *g);
  void *tape = __enzyme_augmentfwd((void *)energy, enzyme_dup, x, g, enzyme_const, n);
  __enzyme_reverse((void *)energy, enzyme_dup, x, g, enzyme_const, n, 1.0, tape);
  double s = 0;
  for (int i = 0; i < n; i++) s += g[i] * v[i];
  free(g);
  return s;
}

enum { N = 7 };
static const double V[N] = {1, -0.5, 2, 0.25, -1, 0.75, 1.5};
static double X[N] = {0.3, -0.2, 0.9, 1.1, -0.7, 0.4, 0.05};

int main(void) {
  double x = 1.3;
  int n = 7;
  /* d/dx x^7 = 7x^6, 42x^5, 210x^4, 840x^3 */
  ac_near("power'", power_1(x, n), 7 * pow(x, 6), 1e-12);
  ac_near("power''", power_2(x, n), 42 * pow(x, 5), 1e-12);
  ac_near("power'''", power_3(x, n), 210 * pow(x, 4), 1e-12);
  ac_near("power''''", power_4(x, n), 840 * pow(x, 3), 1e-12);

  double b = 40, h = 1e-5;
  double o1 = orbit_1(x, b), o2 = orbit_2(x, b), o3 = orbit_3(x, b);
  ac_near("orbit' vs fd", o1, (orbit(x + h, b) - orbit(x - h, b)) / (2 * h), 1e-6);
  ac_near("orbit'' vs fd", o2, (orbit_1(x + h, b) - orbit_1(x - h, b)) / (2 * h), 1e-6);
  ac_near("orbit''' vs fd", o3, (orbit_2(x + h, b) - orbit_2(x - h, b)) / (2 * h), 1e-6);
  ac_near("orbit''' fwd/rev/rev", orbit_3f(x, b), o3, 1e-10);
  ac_near("orbit'' rev/fwd", orbit_2rf(x, b), o2, 1e-10);

  /* Hessian-vector products by reverse over reverse, against differences of the gradient */
  double hv[N] = {0}, hvs[N] = {0};
  __enzyme_autodiff((void *)grad_along, enzyme_dup, X, hv, enzyme_const, V, enzyme_const, N);
  __enzyme_autodiff((void *)grad_along_split, enzyme_dup, X, hvs, enzyme_const, V, enzyme_const, N);
  for (int i = 0; i < N; i++) {
    double keep = X[i];
    X[i] = keep + h; double up = grad_along(X, V, N);
    X[i] = keep - h; double down = grad_along(X, V, N);
    X[i] = keep;
    char what[32];
    snprintf(what, sizeof what, "Hv[%d]", i);
    ac_near(what, hv[i], (up - down) / (2 * h), 1e-6);
    snprintf(what, sizeof what, "Hv split[%d]", i);
    ac_near(what, hvs[i], hv[i], 1e-10);
  }
  return ac_done();
}
