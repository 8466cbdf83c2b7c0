/* GMM written with Eigen, the way a C++ user with Eigen at hand writes it: each component's
 * factor Q as a dense MatrixXd (exp of the diagonal, the strict lower part from icf), the
 * centred point in a VectorXd reused for every (point, component), Q x through a
 * triangularView, the log-sum-exp through array expressions. Eigen's expression templates
 * inline into loops over the matrices' heap storage. */
#include <vector>
#include <Eigen/Dense>
#include "bench.h"
namespace {
double lse(const Eigen::VectorXd &v) { double mx = v.maxCoeff(); return std::log((v.array() - mx).exp().sum()) + mx; }
}
void gmm_objective(int d, int k, int n, const double *alphas, const double *means, const double *icf,
                   const double *x, double gamma, int m, double *err) {
  const int icf_size = d * (d + 1) / 2;
  std::vector<Eigen::MatrixXd> Qs(k, Eigen::MatrixXd::Zero(d, d));
  Eigen::VectorXd sum_qs(k);
  for (int ik = 0; ik < k; ik++) {
    const double *q = icf + ik * icf_size;
    sum_qs(ik) = 0;
    for (int i = 0; i < d; i++) { Qs[ik](i, i) = std::exp(q[i]); sum_qs(ik) += q[i]; }
    for (int i = 0, p = d; i < d; i++)
      for (int j = i + 1; j < d; j++) Qs[ik](j, i) = q[p++];
  }
  Eigen::Map<const Eigen::VectorXd> al(alphas, k);
  Eigen::VectorXd main_term(k), xc(d);
  double slse = 0;
  for (int ix = 0; ix < n; ix++) {
    for (int ik = 0; ik < k; ik++) {
      xc = Eigen::Map<const Eigen::VectorXd>(x + ix * d, d) - Eigen::Map<const Eigen::VectorXd>(means + ik * d, d);
      main_term(ik) = al(ik) + sum_qs(ik) - 0.5 * (Qs[ik].triangularView<Eigen::Lower>() * xc).squaredNorm();
    }
    slse += lse(main_term);
  }
  double frob = 0;
  for (int ik = 0; ik < k; ik++) frob += Qs[ik].squaredNorm();
  const int nn = d + m + 1;
  double lg = 0.25 * d * (d - 1) * std::log(M_PI);
  for (int j = 1; j <= d; j++) lg += std::lgamma(0.5 * nn + 0.5 * (1 - j));
  const double c = nn * d * (std::log(gamma) - 0.5 * std::log(2.0)) - lg;
  *err = -n * d * 0.5 * std::log(2 * M_PI) + slse - n * lse(al) + 0.5 * gamma * gamma * frob - m * sum_qs.sum() - k * c;
}
#define BENCH_KERNEL "gmm_eigen"
#include "harness/gmm.h"
