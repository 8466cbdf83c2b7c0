/* ADBench GMM objective: negative log-likelihood of a Gaussian mixture with Cholesky-
 * parameterised inverse covariances and a Wishart prior; gradient w.r.t. alphas, means, icf. */
#include "bench.h"

/* max-shifted log(sum(exp(v))) */
static double logsumexp(const double *v, int n) {
  double mx = v[0];
  for (int i = 1; i < n; i++) if (v[i] > mx) mx = v[i];
  double s = 0;
  for (int i = 0; i < n; i++) s += exp(v[i] - mx);
  return log(s) + mx;
}

/* log of the multivariate gamma function Gamma_p(a) */
static double log_gamma_distrib(double a, int p) {
  double out = 0.25 * p * (p - 1) * log(M_PI);
  for (int j = 1; j <= p; j++) out += lgamma(a + 0.5 * (1 - j));
  return out;
}

static double sqnorm(const double *v, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += v[i] * v[i];
  return s;
}

/* Q_k = L_k with diagonal exp(icf_k[0:d]) and strict lower part icf_k[d:] (column-major order) */
static void qtimesx(int d, const double *qdiag, const double *ltri, const double *x, double *out) {
  for (int i = 0; i < d; i++) out[i] = qdiag[i] * x[i];
  int idx = 0;
  for (int i = 0; i < d; i++)
    for (int j = i + 1; j < d; j++) out[j] += ltri[idx++] * x[i];
}

static double log_wishart_prior(int d, int k, double gamma, int m, const double *sum_qs,
                                const double *qdiags, const double *icf) {
  int icf_size = d * (d + 1) / 2, n = d + m + 1;
  double c = n * d * (log(gamma) - 0.5 * log(2.0)) - log_gamma_distrib(0.5 * n, d);
  double out = 0;
  for (int ik = 0; ik < k; ik++) {
    double frobenius = sqnorm(qdiags + ik * d, d) + sqnorm(icf + ik * icf_size + d, icf_size - d);
    out += 0.5 * gamma * gamma * frobenius - m * sum_qs[ik];
  }
  return out - k * c;
}

void gmm_objective(int d, int k, int n, const double *alphas, const double *means,
                   const double *icf, const double *x, double gamma, int m, double *err) {
  int icf_size = d * (d + 1) / 2;
  double *qdiags = malloc(sizeof(double) * d * k);
  double *sum_qs = malloc(sizeof(double) * k);
  double *xcentered = malloc(sizeof(double) * d);
  double *qxcentered = malloc(sizeof(double) * d);
  double *main_term = malloc(sizeof(double) * k);
  for (int ik = 0; ik < k; ik++) {
    sum_qs[ik] = 0;
    for (int id = 0; id < d; id++) {
      double q = icf[ik * icf_size + id];
      sum_qs[ik] += q;
      qdiags[ik * d + id] = exp(q);
    }
  }
  double slse = 0;
  for (int ix = 0; ix < n; ix++) {
    for (int ik = 0; ik < k; ik++) {
      for (int id = 0; id < d; id++) xcentered[id] = x[ix * d + id] - means[ik * d + id];
      qtimesx(d, qdiags + ik * d, icf + ik * icf_size + d, xcentered, qxcentered);
      main_term[ik] = alphas[ik] + sum_qs[ik] - 0.5 * sqnorm(qxcentered, d);
    }
    slse += logsumexp(main_term, k);
  }
  double constant = -n * d * 0.5 * log(2 * M_PI);
  double lse_alphas = logsumexp(alphas, k);
  *err = constant + slse - n * lse_alphas + log_wishart_prior(d, k, gamma, m, sum_qs, qdiags, icf);
  free(qdiags); free(sum_qs); free(xcentered); free(qxcentered); free(main_term);
}

/* the hand-written adjoint, timed beside the AD gradient */
#define BENCH_EXPERT 1
#include "expert/gmm_adjoint.h"

#define BENCH_KERNEL "gmm"
#include "harness/gmm.h"
