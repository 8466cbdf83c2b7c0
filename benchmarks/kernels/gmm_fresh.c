/* GMM objective with fresh scratch: the centred vector and Q·x are malloc'd and freed for
 * every (point, component) instead of being reused, and the per-point log-sum-exp gets a
 * fresh array too (allocation inside the hot loops, as naive C often has it). */
#include "bench.h"

static double logsumexp(const double *v, int n) {
  double mx = v[0];
  for (int i = 1; i < n; i++) if (v[i] > mx) mx = v[i];
  double s = 0;
  for (int i = 0; i < n; i++) s += exp(v[i] - mx);
  return log(s) + mx;
}

/* returns a fresh Q_k x (the caller frees it) */
static double *qtimesx_new(int d, const double *icf_k, const double *xc) {
  double *out = malloc(sizeof(double) * d);
  for (int i = 0; i < d; i++) out[i] = exp(icf_k[i]) * xc[i];
  int idx = d;
  for (int i = 0; i < d; i++)
    for (int j = i + 1; j < d; j++) out[j] += icf_k[idx++] * xc[i];
  return out;
}

void gmm_objective(int d, int k, int n, const double *alphas, const double *means,
                   const double *icf, const double *x, double gamma, int m, double *err) {
  int icf_size = d * (d + 1) / 2;
  double slse = 0;
  for (int ix = 0; ix < n; ix++) {
    double *main_term = malloc(sizeof(double) * k);
    for (int ik = 0; ik < k; ik++) {
      double *xc = malloc(sizeof(double) * d);
      for (int id = 0; id < d; id++) xc[id] = x[ix * d + id] - means[ik * d + id];
      double *qx = qtimesx_new(d, icf + ik * icf_size, xc);
      double sq = 0, sum_q = 0;
      for (int id = 0; id < d; id++) { sq += qx[id] * qx[id]; sum_q += icf[ik * icf_size + id]; }
      main_term[ik] = alphas[ik] + sum_q - 0.5 * sq;
      free(qx);
      free(xc);
    }
    slse += logsumexp(main_term, k);
    free(main_term);
  }
  int nn = d + m + 1;
  double lgd = 0.25 * d * (d - 1) * log(M_PI);
  for (int j = 1; j <= d; j++) lgd += lgamma(0.5 * nn + 0.5 * (1 - j));
  double c = nn * d * (log(gamma) - 0.5 * log(2.0)) - lgd, prior = 0;
  for (int ik = 0; ik < k; ik++) {
    double frob = 0, sum_q = 0;
    for (int id = 0; id < d; id++) { double q = icf[ik * icf_size + id]; frob += exp(q) * exp(q); sum_q += q; }
    for (int j = d; j < icf_size; j++) frob += icf[ik * icf_size + j] * icf[ik * icf_size + j];
    prior += 0.5 * gamma * gamma * frob - m * sum_q;
  }
  *err = -n * d * 0.5 * log(2 * M_PI) + slse - n * logsumexp(alphas, k) + prior - k * c;
}

#define BENCH_KERNEL "gmm_fresh"
#include "harness/gmm.h"
