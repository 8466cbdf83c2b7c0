/* main.c: aim a probe. Find the initial velocity of body 2 so that after T time units
 * of n-body gravity it ends at a target point, by gradient descent on the squared miss
 * distance; the gradient with respect to the velocity comes from __enzyme_autodiff
 * through the whole leapfrog simulation in libphysics.a. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "physics.h"

extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);

enum { N = 3, PROBE = 2, STEPS = 200 };
static const double DT = 0.01;

/* Squared distance between the probe's final position and the target. */
static double miss(const double *v0, const double *init, const double *mass, const double *target) {
  double state[N * PHYS_STRIDE];
  memcpy(state, init, sizeof state);
  for (int k = 0; k < 3; k++) state[PHYS_STRIDE * PROBE + 3 + k] = v0[k];
  phys_simulate(state, mass, N, STEPS, DT);
  double loss = 0.0;
  for (int k = 0; k < 3; k++) {
    double d = state[PHYS_STRIDE * PROBE + k] - target[k];
    loss += d * d;
  }
  return loss;
}

static void gradient(const double *v0, const double *init, const double *mass,
                     const double *target, double *grad) {
  for (int k = 0; k < 3; k++) grad[k] = 0.0;
  __enzyme_autodiff((void *)miss, enzyme_dup, v0, grad, enzyme_const, init,
                    enzyme_const, mass, enzyme_const, target);
}

int main(void) {
  /* a star, a planet on a circular orbit, and a light probe */
  const double mass[N] = {1.0, 1e-3, 1e-6};
  double init[N * PHYS_STRIDE] = {
      0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
      1.0, 0.0, 0.0, 0.0, 1.0, 0.0,
      0.0, -1.5, 0.0, 0.0, 0.0, 0.0};
  /* the target is where a velocity we then forget would have taken the probe */
  const double secret_v0[3] = {0.75, 0.15, 0.1};
  double target[3], state[N * PHYS_STRIDE];
  memcpy(state, init, sizeof state);
  for (int k = 0; k < 3; k++) state[PHYS_STRIDE * PROBE + 3 + k] = secret_v0[k];
  double energy0 = phys_energy(state, mass, N);
  phys_simulate(state, mass, N, STEPS, DT);
  printf("energy drift over the reference run: %.2e\n", phys_energy(state, mass, N) - energy0);
  for (int k = 0; k < 3; k++) target[k] = state[PHYS_STRIDE * PROBE + k];

  double v0[3] = {0.5, 0.0, 0.0}, grad[3];

  /* check the derivative once against central finite differences */
  gradient(v0, init, mass, target, grad);
  double worst = 0.0;
  for (int k = 0; k < 3; k++) {
    double vp[3] = {v0[0], v0[1], v0[2]}, vm[3] = {v0[0], v0[1], v0[2]}, h = 1e-6;
    vp[k] += h;
    vm[k] -= h;
    double fd = (miss(vp, init, mass, target) - miss(vm, init, mass, target)) / (2 * h);
    double err = fabs(grad[k] - fd) / fmax(1e-8, fabs(fd));
    if (err > worst) worst = err;
  }
  printf("gradient vs finite differences: max relative error %.1e\n", worst);

  double loss = miss(v0, init, mass, target), first = loss, rate = 0.05;
  int iter;
  for (iter = 0; iter < 200 && loss > 1e-10; iter++) {
    gradient(v0, init, mass, target, grad);
    double trial[3], trial_loss;
    for (;;) { /* backtracking: shrink the step until the miss distance falls */
      for (int k = 0; k < 3; k++) trial[k] = v0[k] - rate * grad[k];
      trial_loss = miss(trial, init, mass, target);
      if (trial_loss < loss || rate < 1e-12) break;
      rate *= 0.5;
    }
    memcpy(v0, trial, sizeof v0);
    loss = trial_loss;
    rate *= 1.5;
    if (iter % 2 == 0) printf("iter %3d  loss %.6e  v0 = (%.5f, %.5f, %.5f)\n", iter, loss, v0[0], v0[1], v0[2]);
  }
  printf("hand-written kernel gradient calls: %ld\n", phys_kernel_grad_calls);
  int ok = worst < 1e-4 && loss < 1e-6 * first && phys_kernel_grad_calls > 0;
  printf("final: loss %.3e (from %.3e) after %d iterations, v0 = (%.5f, %.5f, %.5f): %s\n",
         loss, first, iter, v0[0], v0[1], v0[2], ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
