/* GMM written in C++ with the standard library: std::vector scratch (the centred vector and
 * Q times it, reused for every (point, component)), std::inner_product for the squared norm,
 * a log-sum-exp through std::max_element and std::accumulate with a lambda, range-for loops.
 * The optimizer turns the algorithms and range-for into loops that walk pointers. */
#include <algorithm>
#include <numeric>
#include <vector>
#include "bench.h"

static double logsumexp(const std::vector<double> &v) {
  double mx = *std::max_element(v.begin(), v.end());
  double s = std::accumulate(v.begin(), v.end(), 0.0, [mx](double acc, double t) { return acc + std::exp(t - mx); });
  return std::log(s) + mx;
}

/* Q x for Q with diagonal qdiag and strict lower part ltri (column-major, as ADBench packs it) */
static void qtimesx(int d, const double *qdiag, const double *ltri, const std::vector<double> &x,
                    std::vector<double> &out) {
  for (int i = 0; i < d; i++) out[i] = qdiag[i] * x[i];
  int lp = 0;
  for (int i = 0; i < d; i++)
    for (int j = i + 1; j < d; j++) out[j] += ltri[lp++] * x[i];
}

static double log_gamma_distrib(double a, int p) {
  double out = 0.25 * p * (p - 1) * std::log(M_PI);
  for (int j = 1; j <= p; j++) out += std::lgamma(a + 0.5 * (1 - j));
  return out;
}

void gmm_objective(int d, int k, int n, const double *alphas, const double *means, const double *icf,
                   const double *x, double gamma, int m, double *err) {
  const int icf_size = d * (d + 1) / 2;
  std::vector<double> qdiags(d * k), sum_qs(k), xcentered(d), qxcentered(d), main_term(k);
  for (int ik = 0; ik < k; ik++) {
    const double *q = icf + ik * icf_size;
    sum_qs[ik] = std::accumulate(q, q + d, 0.0);
    std::transform(q, q + d, qdiags.begin() + ik * d, [](double v) { return std::exp(v); });
  }
  double slse = 0;
  for (int ix = 0; ix < n; ix++) {
    for (int ik = 0; ik < k; ik++) {
      std::transform(x + ix * d, x + ix * d + d, means + ik * d, xcentered.begin(), std::minus<double>());
      qtimesx(d, &qdiags[ik * d], icf + ik * icf_size + d, xcentered, qxcentered);
      double sq = std::inner_product(qxcentered.begin(), qxcentered.end(), qxcentered.begin(), 0.0);
      main_term[ik] = alphas[ik] + sum_qs[ik] - 0.5 * sq;
    }
    slse += logsumexp(main_term);
  }
  const std::vector<double> alpha_v(alphas, alphas + k);
  const double lse_alphas = logsumexp(alpha_v);
  double frob = 0;
  for (const double &qd : qdiags) frob += qd * qd;
  for (int ik = 0; ik < k; ik++)
    for (const double *l = icf + ik * icf_size + d; l != icf + (ik + 1) * icf_size; ++l) frob += *l * *l;
  const double sum_all_q = std::accumulate(sum_qs.begin(), sum_qs.end(), 0.0);
  const int nn = d + m + 1;
  const double c = nn * d * (std::log(gamma) - 0.5 * std::log(2.0)) - log_gamma_distrib(0.5 * nn, d);
  const double prior = 0.5 * gamma * gamma * frob - m * sum_all_q - k * c;
  *err = -n * d * 0.5 * std::log(2 * M_PI) + slse - n * lse_alphas + prior;
}

#define BENCH_KERNEL "gmm_stl"
#include "harness/gmm.h"
