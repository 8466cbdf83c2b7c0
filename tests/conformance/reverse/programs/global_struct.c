/* A global struct of doubles written by the differentiated function and read back. */
#include "hcheck.h"
double __enzyme_autodiff(void *, ...);
struct state { double pos[3]; double energy; int steps; } S;
double f(double x) {
  for (int i = 0; i < 3; i++) S.pos[i] = x * (i + 1);
  S.energy = S.pos[0] * S.pos[1] + S.pos[2];
  S.steps++;
  return S.energy * x;
}
int main(void) {
  double g = __enzyme_autodiff((void *)f, 1.5); /* f = (2x^2 + 3x) x → 6x^2 + 6x */
  hc_near("d", g, 6 * 1.5 * 1.5 + 6 * 1.5, 1e-12);
  hc_near("global written once", S.steps, 1, 0);
  hc_near("global primal", S.energy, 2 * 1.5 * 1.5 + 4.5, 1e-12);
  return hc_done();
}
