// Gradients of a C++ system built from separately compiled TUs; the expected values use the
// custom rule of smoothabs (4 instead of the true slope), so finite differences of a
// rule-consistent reference energy are the check.
#include "hcheck.h"
#include "system.hpp"
extern "C" {
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
}
extern int smoothabs_grad_calls;

// the same energy with smoothabs replaced by 4|dz| (what the rule says the slope is, locally)
static double ref_energy(const double *pos, int n, const double *base) {
  double e = 0;
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++) {
      double dx = pos[3 * i] - pos[3 * j], dy = pos[3 * i + 1] - pos[3 * j + 1], dz = pos[3 * i + 2] - pos[3 * j + 2];
      double dz0 = base[3 * i + 2] - base[3 * j + 2];
      e += 1.0 / std::sqrt(dx * dx + dy * dy + dz * dz + 0.1) + 0.01 * 4.0 * (dz - dz0);
    }
  return e;
}

int main() {
  const int n = 4;
  double pos[3 * n] = {0, 0, 0, 1.1, 0.2, -0.3, -0.5, 0.9, 0.4, 0.3, -0.8, 1.0};
  double g[3 * n] = {0};
  __enzyme_autodiff((void *)system_energy, enzyme_dup, pos, g, enzyme_const, n);
  hc_near("rule used per pair", smoothabs_grad_calls, n * (n - 1) / 2, 0);
  for (int k = 0; k < 3 * n; k++) {
    double p[3 * n], m[3 * n], h = 1e-6;
    for (int q = 0; q < 3 * n; q++) p[q] = m[q] = pos[q];
    p[k] += h; m[k] -= h;
    hc_near("gradient", g[k], (ref_energy(p, n, pos) - ref_energy(m, n, pos)) / (2 * h), 1e-6);
  }
  // velocities: only the kinetic part depends on them; positions const
  double vel[n] = {0.5, -1.0, 2.0, 0.25}, gv[n] = {0};
  __enzyme_autodiff((void *)total, enzyme_const, pos, enzyme_dup, vel, gv, enzyme_const, n);
  for (int i = 0; i < n; i++) hc_near("kinetic", gv[i], vel[i] * (1.0 + 0.1 * i), 1e-12);
  // forward mode along x-coordinates only (smoothabs has no forward rule and its z terms get no tangent)
  double dir[3 * n] = {0};
  for (int i = 0; i < n; i++) dir[3 * i] = 1.0 - 0.5 * i;
  double gd = 0;
  for (int k = 0; k < 3 * n; k++) gd += g[k] * dir[k];
  hc_near("forward = g . dir", __enzyme_fwddiff((void *)system_energy, enzyme_dup, pos, dir, enzyme_const, n), gd, 1e-10);
  return hc_done();
}
