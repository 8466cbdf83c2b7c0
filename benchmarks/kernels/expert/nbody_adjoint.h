/* Hand-written adjoint of nbody.c's objective (the "expert" line): the forward sweep keeps the
 * positions of every step (the only values the reverse sweep needs: velocities enter
 * linearly), then runs the steps backwards with the analytic Jacobian of the softened
 * force. Accumulates (+=) the gradient of the final energy w.r.t. pos0 and vel0. */
static void nbody_expert_gradient(int n, int steps, double dt, const double *mass, const double *pos0,
                                  const double *vel0, double *d_pos0, double *d_vel0) {
  const double eps2 = 0.01; /* the objective's SOFTENING2 */
  double *traj = malloc(sizeof(double) * 3 * n * (size_t)(steps + 1)); /* positions before each step */
  double *vel = malloc(sizeof(double) * 3 * n), *acc = malloc(sizeof(double) * 3 * n);
  double *dpos = malloc(sizeof(double) * 3 * n), *dvel = malloc(sizeof(double) * 3 * n);
  memcpy(traj, pos0, sizeof(double) * 3 * n);
  memcpy(vel, vel0, sizeof(double) * 3 * n);
  for (int s = 0; s < steps; s++) {
    const double *pos = traj + (size_t)s * 3 * n;
    double *next = traj + (size_t)(s + 1) * 3 * n;
    for (int i = 0; i < n; i++) {
      double ax = 0, ay = 0, az = 0;
      for (int j = 0; j < n; j++) {
        double dx = pos[3 * j] - pos[3 * i], dy = pos[3 * j + 1] - pos[3 * i + 1], dz = pos[3 * j + 2] - pos[3 * i + 2];
        double r2 = dx * dx + dy * dy + dz * dz + eps2, sc = mass[j] / (r2 * sqrt(r2));
        ax += sc * dx; ay += sc * dy; az += sc * dz;
      }
      acc[3 * i] = ax; acc[3 * i + 1] = ay; acc[3 * i + 2] = az;
    }
    for (int i = 0; i < 3 * n; i++) { vel[i] += dt * acc[i]; next[i] = pos[i] + dt * vel[i]; }
  }
  /* final energy: kinetic and pairwise potential */
  const double *pos = traj + (size_t)steps * 3 * n;
  for (int i = 0; i < n; i++)
    for (int c = 0; c < 3; c++) { dvel[3 * i + c] = mass[i] * vel[3 * i + c]; dpos[3 * i + c] = 0; }
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++) {
      double d[3] = {pos[3 * j] - pos[3 * i], pos[3 * j + 1] - pos[3 * i + 1], pos[3 * j + 2] - pos[3 * i + 2]};
      double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + eps2, sc = mass[i] * mass[j] / (r2 * sqrt(r2));
      for (int c = 0; c < 3; c++) { dpos[3 * j + c] += sc * d[c]; dpos[3 * i + c] -= sc * d[c]; }
    }
  for (int s = steps - 1; s >= 0; s--) {
    const double *p = traj + (size_t)s * 3 * n;
    for (int i = 0; i < 3 * n; i++) dvel[i] += dt * dpos[i]; /* pos += dt vel (new vel) */
    for (int i = 0; i < n; i++) {                            /* vel += dt a(pos) */
      double g[3] = {dt * dvel[3 * i], dt * dvel[3 * i + 1], dt * dvel[3 * i + 2]};
      for (int j = 0; j < n; j++) {
        double d[3] = {p[3 * j] - p[3 * i], p[3 * j + 1] - p[3 * i + 1], p[3 * j + 2] - p[3 * i + 2]};
        double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + eps2, inv = 1 / sqrt(r2);
        double r3 = mass[j] * inv * inv * inv, dg = d[0] * g[0] + d[1] * g[1] + d[2] * g[2];
        double r5 = 3 * r3 * inv * inv * dg;
        for (int c = 0; c < 3; c++) {
          double dd = r3 * g[c] - r5 * d[c];
          dpos[3 * j + c] += dd;
          dpos[3 * i + c] -= dd;
        }
      }
    }
  }
  for (int i = 0; i < 3 * n; i++) { d_pos0[i] += dpos[i]; d_vel0[i] += dvel[i]; }
  free(traj); free(vel); free(acc); free(dpos); free(dvel);
}
