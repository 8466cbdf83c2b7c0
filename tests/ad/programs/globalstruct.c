/* Global structs holding doubles and floats next to integers (simulation state, particle
 * arrays), written and read back by the differentiated function. */
#include "adcheck.h"
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
struct state { double pos[3]; double energy; int steps; } S;
struct part { double m; int id; float q; } P[4];

double f(double x) {
  for (int i = 0; i < 3; i++) S.pos[i] = x * (i + 1);
  S.energy = S.pos[0] * S.pos[1] + S.pos[2];
  S.steps++;
  for (int i = 0; i < 4; i++) { P[i].m = x * i; P[i].q = (float)(x * x); P[i].id = i; }
  double t = 0;
  for (int i = 0; i < 4; i++) t += P[i].m * P[i].q * P[i].id;
  return S.energy * x + t;   /* (2x^2 + 3x) x + 14 x^3 */
}

int main(void) {
  double x = 1.5, want = 6 * x * x + 6 * x + 42 * x * x;
  ac_near("reverse", __enzyme_autodiff((void *)f, x), want, 1e-12);
  ac_near("global written once", S.steps, 1, 0);
  ac_near("global primal", S.energy, 2 * x * x + 3 * x, 1e-12);
  ac_near("forward", __enzyme_fwddiff((void *)f, x, 1.0), want, 1e-12);
  ac_near("written once more", S.steps, 2, 0);
  return ac_done();
}
