/* Reproducer (found by benchmarks/kernels/nbody_step.c, whose AD-before-optimization build
 * is refused): enzyme-build refuses a function that stores an inactive (enzyme_const) pointer
 * into a local struct next to an active one and passes the struct to a call it does not
 * inline:
 *
 *   .venv/bin/enzyme-build cc -O2 -fno-math-errno benchmarks/repro/nbody_step_before_opt.c -o /tmp/repro -lm
 *
 * fails with "enzyme-build: error: a pointer to memory without a shadow (%argN) is stored into
 * active memory or returned in @energy_after_step" (with or without ENZYME_BUILD_AD_BEFORE_OPT=1).
 * nbody_step.c itself builds after optimization only because step() is inlined there and SROA
 * splits the struct; before optimization the struct stays in memory and the build is refused. */
#include <stdio.h>

extern int enzyme_const, enzyme_dup;
void __enzyme_autodiff(void *, ...);

struct state { const double *mass; double *pos; };

__attribute__((noinline)) static void step(struct state *s, int n) {
  for (int i = 0; i < n; i++) s->pos[i] += 0.1 * s->mass[i] * s->pos[i];
}

double energy_after_step(int n, const double *mass, double *pos) {
  struct state s = {mass, pos};
  step(&s, n);
  double e = 0;
  for (int i = 0; i < n; i++) e += s.pos[i] * s.pos[i];
  return e;
}

int main(void) {
  double mass[4] = {1, 2, 3, 4}, pos[4] = {1, 1, 1, 1}, d_pos[4] = {0};
  __enzyme_autodiff((void *)energy_after_step, enzyme_const, 4, enzyme_const, mass, enzyme_dup, pos, d_pos);
  printf("%g %g %g %g\n", d_pos[0], d_pos[1], d_pos[2], d_pos[3]);
  return 0;
}
