// A virtual method called through a base-class reference (not devirtualizable: the
// object's dynamic type depends on a run-time flag).
#include "hcheck.h"
#include <cmath>
extern "C" {
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
}
struct Potential { virtual double eval(double r) const = 0; virtual ~Potential() {} };
struct Harmonic : Potential { double k; explicit Harmonic(double k) : k(k) {} double eval(double r) const override { return 0.5 * k * r * r; } };
struct Morse : Potential { double a; explicit Morse(double a) : a(a) {} double eval(double r) const override { double e = 1 - std::exp(-a * r); return e * e; } };
extern "C" double energy(const Potential *p, const double *r, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += p->eval(r[i]);
  return s;
}
int main(int argc, char **) {
  Harmonic h(2.0);
  Morse m(1.5);
  const Potential *p = argc > 5 ? (const Potential *)&m : (const Potential *)&h;
  double r[3] = {0.5, 1.0, -0.3}, dr[3] = {0};
  __enzyme_autodiff((void *)energy, enzyme_const, p, enzyme_dup, r, dr, enzyme_const, 3);
  for (int i = 0; i < 3; i++) hc_near("dr", dr[i], 2.0 * r[i], 1e-12);
  return hc_done();
}
