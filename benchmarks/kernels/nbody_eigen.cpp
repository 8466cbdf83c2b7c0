/* n-body written with Eigen: the state in std::vector<Eigen::Vector3d>, each pair visited
 * once (Newton's third law), the force added to one body and subtracted from the other
 * with vector expressions. */
#include <vector>
#include <Eigen/Dense>
#include "bench.h"
namespace {
using V = Eigen::Vector3d;
const double SOFT = 0.01;
}
double nbody_final_energy(int n, int steps, double dt, const double *mass, const double *pos0, const double *vel0) {
  std::vector<V> x(n), v(n), a(n);
  for (int i = 0; i < n; i++) { x[i] = V(pos0[3 * i], pos0[3 * i + 1], pos0[3 * i + 2]); v[i] = V(vel0[3 * i], vel0[3 * i + 1], vel0[3 * i + 2]); }
  for (int s = 0; s < steps; s++) {
    for (auto &ai : a) ai.setZero();
    for (int i = 0; i < n; i++)
      for (int j = i + 1; j < n; j++) {
        V d = x[j] - x[i];
        double r2 = d.squaredNorm() + SOFT;
        double inv3 = 1.0 / (r2 * std::sqrt(r2));
        a[i] += mass[j] * inv3 * d;
        a[j] -= mass[i] * inv3 * d;
      }
    for (int i = 0; i < n; i++) { v[i] += dt * a[i]; x[i] += dt * v[i]; }
  }
  double e = 0;
  for (int i = 0; i < n; i++) {
    e += 0.5 * mass[i] * v[i].squaredNorm();
    for (int j = i + 1; j < n; j++) e -= mass[i] * mass[j] / std::sqrt((x[j] - x[i]).squaredNorm() + SOFT);
  }
  return e;
}
#define BENCH_KERNEL "nbody_eigen"
#include "harness/nbody.h"
