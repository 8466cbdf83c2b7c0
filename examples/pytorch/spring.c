/* spring.c: a chain of n masses on a line, each tied to its rest position by a spring of its
 * own stiffness k[i] and to its neighbours by unit springs, with one damping coefficient c.
 * simulate() integrates it with semi-implicit Euler and records every position. */

void simulate(const double *k, double c, int n, const double *x0, int steps, double dt,
              double *trajectory) {
  double x[64], v[64];
  if (n > 64) n = 64;
  for (int i = 0; i < n; i++) { x[i] = x0[i]; v[i] = 0.0; }
  for (int t = 0; t < steps; t++) {
    for (int i = 0; i < n; i++) {
      double force = -k[i] * x[i] - c * v[i];
      if (i > 0) force += x[i - 1] - x[i];
      if (i + 1 < n) force += x[i + 1] - x[i];
      v[i] += dt * force;
    }
    for (int i = 0; i < n; i++) {
      x[i] += dt * v[i];
      trajectory[t * n + i] = x[i];
    }
  }
}
