/* Hand-written adjoint of heat.c's objective (the "expert" line): the forward sweep keeps the
 * state of every step (8 bytes per point and step, the least a reverse sweep without
 * recomputation needs: the reaction term is cubic), and the reverse sweep runs the steps
 * backwards as a gather, each point's adjoint summed from its own update and its two
 * neighbours' in registers (no read-modify-write of neighbouring adjoints). Accumulates (+=)
 * the gradient of the final energy w.r.t. u0 and kappa. */
static void heat_expert_gradient(int n, int steps, double r, const double *u0, const double *kappa,
                                 double *d_u0, double *d_kappa) {
  double *traj = malloc(sizeof(double) * (size_t)n * (size_t)(steps + 1)); /* the state before each step */
  double *du = malloc(sizeof(double) * n), *dn = malloc(sizeof(double) * n);
  memcpy(traj, u0, sizeof(double) * n);
  for (int s = 0; s < steps; s++) {
    const double *u = traj + (size_t)s * n;
    double *next = traj + (size_t)(s + 1) * n;
    next[0] = u[0];
    next[n - 1] = u[n - 1];
    for (int i = 1; i < n - 1; i++)
      next[i] = u[i] + r * kappa[i] * (u[i - 1] - 2 * u[i] + u[i + 1]) + 0.5 * r * (u[i] - u[i] * u[i] * u[i]);
  }
  const double *last = traj + (size_t)steps * n;
  for (int i = 0; i < n; i++) du[i] = last[i]; /* d(0.5 u^2)/du */
  for (int s = steps - 1; s >= 0; s--) {
    const double *u = traj + (size_t)s * n;
    /* du: adjoint of the state after step s; dn: of the state before it */
    for (int i = 1; i < n - 1; i++) {
      double ui = u[i], g = du[i], rk = r * kappa[i];
      d_kappa[i] += g * r * (u[i - 1] - 2 * ui + u[i + 1]);
      double own = g * (1 - 2 * rk + 0.5 * r * (1 - 3 * ui * ui));
      double left = i > 1 ? du[i - 1] * r * kappa[i - 1] : 0;
      double right = i < n - 2 ? du[i + 1] * r * kappa[i + 1] : 0;
      dn[i] = own + left + right;
    }
    dn[0] = du[0] + (n > 2 ? du[1] * r * kappa[1] : 0);
    dn[n - 1] = du[n - 1] + (n > 2 ? du[n - 2] * r * kappa[n - 2] : 0);
    double *t = du; du = dn; dn = t;
  }
  for (int i = 0; i < n; i++) d_u0[i] += du[i];
  free(traj); free(du); free(dn);
}
