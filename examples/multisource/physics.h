/* physics.h: a small gravitational n-body library (positions, velocities, masses).
 *
 * The state of n bodies is one array of doubles, body-major: x y z vx vy vz (6 per
 * body); masses live in a separate array. Everything is plain C, built as a fat
 * static library (libphysics.a) so enzyme-build can differentiate through it.
 */
#ifndef PHYSICS_H
#define PHYSICS_H

#define PHYS_STRIDE 6          /* doubles per body in a state array */
#define PHYS_SOFTENING 1e-2    /* Plummer softening length, keeps close encounters finite */

/* The softened inverse-cube distance kernel 1 / (r2 + eps^2)^(3/2), the hot spot of
 * every force evaluation. Its derivative is hand-written (kernel_rules.c) and attached
 * here, so every translation unit that includes this header sees the same rule. */
typedef struct { void *tape; double primal; } phys_kernel_aug_t;
phys_kernel_aug_t phys_kernel_aug(double r2);
double phys_kernel_grad(double r2, double dret, void *tape);
double phys_kernel(double r2)
    __attribute__((enzyme("augment", phys_kernel_aug), enzyme("gradient", phys_kernel_grad)));

/* Number of times the hand-written gradient ran (to show it is used). */
extern long phys_kernel_grad_calls;

/* acc[3*i..] = gravitational acceleration of body i (G = 1). */
void phys_accelerations(const double *state, const double *mass, int n, double *acc);

/* One kick-drift-kick leapfrog step of length dt, in place. */
void phys_step(double *state, const double *mass, int n, double dt);

/* `steps` leapfrog steps. */
void phys_simulate(double *state, const double *mass, int n, int steps, double dt);

/* Total energy (kinetic + softened potential); conserved up to O(dt^2). */
double phys_energy(const double *state, const double *mass, int n);

#endif
