/* The heat stepper in C++: the state in std::vector buffers (allocated only when not empty,
 * as std::vector does), swapped with std::swap every step, the energy summed by a range-for. */
#include <utility>
#include <vector>
#include "bench.h"

double heat_objective(int n, int steps, double r, const double *u0, const double *kappa) {
  std::vector<double> u(u0, u0 + n), next(n);
  next.front() = u.front();
  next.back() = u.back();
  for (int s = 0; s < steps; s++) {
    for (size_t i = 1; i + 1 < u.size(); i++)
      next[i] = u[i] + r * kappa[i] * (u[i - 1] - 2 * u[i] + u[i + 1]) + 0.5 * r * (u[i] - u[i] * u[i] * u[i]);
    std::swap(u, next);
  }
  double e = 0;
  for (double v : u) e += 0.5 * v * v;
  return e;
}

#define BENCH_KERNEL "heat_vector"
#include "harness/heat.h"
