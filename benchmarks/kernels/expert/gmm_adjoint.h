/* Hand-written adjoint of gmm.c's objective (the "expert" line): what a careful programmer
 * writes by hand — one forward sweep per data point keeping that point's centred vectors
 * and Q·x products, then their adjoints, recomputing nothing else. Accumulates (+=) the
 * gradient of err w.r.t. alphas, means and icf, like the AD call with d_err = 1. */
static void gmm_expert_gradient(int d, int k, int n, const double *alphas, const double *means,
                                const double *icf, const double *x, double gamma, int m,
                                double *d_alphas, double *d_means, double *d_icf) {
  int icf_size = d * (d + 1) / 2;
  double *qdiags = malloc(sizeof(double) * d * k), *d_qdiags = calloc((size_t)d * k, sizeof(double));
  double *d_sum_qs = calloc((size_t)k, sizeof(double));
  double *xc = malloc(sizeof(double) * d * k), *qx = malloc(sizeof(double) * d * k);
  double *main_term = malloc(sizeof(double) * k), *dxc = malloc(sizeof(double) * d);
  double *sum_qs = malloc(sizeof(double) * k);
  for (int ik = 0; ik < k; ik++) {
    sum_qs[ik] = 0;
    for (int id = 0; id < d; id++) {
      sum_qs[ik] += icf[ik * icf_size + id];
      qdiags[ik * d + id] = exp(icf[ik * icf_size + id]);
    }
  }
  for (int ix = 0; ix < n; ix++) {
    const double *xi = x + ix * d;
    double mx = -INFINITY;
    for (int ik = 0; ik < k; ik++) { /* forward: z = Q_k (x_i - mu_k), main term */
      double *c = xc + ik * d, *z = qx + ik * d;
      const double *qd = qdiags + ik * d, *l = icf + ik * icf_size + d;
      for (int id = 0; id < d; id++) { c[id] = xi[id] - means[ik * d + id]; z[id] = qd[id] * c[id]; }
      for (int i = 0, idx = 0; i < d; i++)
        for (int j = i + 1; j < d; j++) z[j] += l[idx++] * c[i];
      double sq = 0;
      for (int id = 0; id < d; id++) sq += z[id] * z[id];
      main_term[ik] = alphas[ik] + sum_qs[ik] - 0.5 * sq;
      if (main_term[ik] > mx) mx = main_term[ik];
    }
    double total = 0;
    for (int ik = 0; ik < k; ik++) { main_term[ik] = exp(main_term[ik] - mx); total += main_term[ik]; }
    for (int ik = 0; ik < k; ik++) { /* reverse: w = softmax, dz = -w z */
      double w = main_term[ik] / total;
      const double *c = xc + ik * d, *z = qx + ik * d, *l = icf + ik * icf_size + d, *qd = qdiags + ik * d;
      double *dl = d_icf + ik * icf_size + d, *dqd = d_qdiags + ik * d;
      d_alphas[ik] += w;
      d_sum_qs[ik] += w;
      for (int id = 0; id < d; id++) { double dz = -w * z[id]; dqd[id] += dz * c[id]; dxc[id] = qd[id] * dz; }
      for (int i = 0, idx = 0; i < d; i++)
        for (int j = i + 1; j < d; j++, idx++) {
          double dz = -w * z[j];
          dl[idx] += dz * c[i];
          dxc[i] += l[idx] * dz;
        }
      for (int id = 0; id < d; id++) d_means[ik * d + id] -= dxc[id];
    }
  }
  /* - n logsumexp(alphas) */
  double amx = alphas[0], atotal = 0;
  for (int ik = 1; ik < k; ik++) if (alphas[ik] > amx) amx = alphas[ik];
  for (int ik = 0; ik < k; ik++) atotal += exp(alphas[ik] - amx);
  for (int ik = 0; ik < k; ik++) d_alphas[ik] -= n * exp(alphas[ik] - amx) / atotal;
  /* Wishart prior: 0.5 gamma^2 (|qdiag|^2 + |L|^2) - m sum_q per component */
  for (int ik = 0; ik < k; ik++) {
    d_sum_qs[ik] -= m;
    for (int id = 0; id < d; id++) d_qdiags[ik * d + id] += gamma * gamma * qdiags[ik * d + id];
    for (int j = d; j < icf_size; j++) d_icf[ik * icf_size + j] += gamma * gamma * icf[ik * icf_size + j];
    for (int id = 0; id < d; id++)
      d_icf[ik * icf_size + id] += d_qdiags[ik * d + id] * qdiags[ik * d + id] + d_sum_qs[ik];
  }
  free(qdiags); free(d_qdiags); free(d_sum_qs); free(xc); free(qx); free(main_term); free(dxc); free(sum_qs);
}
