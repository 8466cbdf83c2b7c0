/* GMM objective in one function, no helpers and no scratch vectors: Q_k (x_i - mu_k) is
 * formed row by row from the packed column-major triangle (index arithmetic per entry), the
 * centred vector recomputed on the fly, the log-sum-exps written out where they are used. */
#include "bench.h"

void gmm_objective(int d, int k, int n, const double *alphas, const double *means,
                   const double *icf, const double *x, double gamma, int m, double *err) {
  int icf_size = d * (d + 1) / 2;
  double *main_term = malloc(sizeof(double) * k);
  double slse = 0;
  for (int ix = 0; ix < n; ix++) {
    double mx = -INFINITY;
    for (int ik = 0; ik < k; ik++) {
      const double *q = icf + ik * icf_size, *mu = means + ik * d, *xi = x + ix * d;
      double sq = 0, sum_q = 0;
      for (int row = 0; row < d; row++) {
        double z = exp(q[row]) * (xi[row] - mu[row]);
        for (int col = 0; col < row; col++) /* L[row][col] sits at d + col*d - col*(col+1)/2 + row-col-1 */
          z += q[d + col * d - col * (col + 1) / 2 + (row - col - 1)] * (xi[col] - mu[col]);
        sq += z * z;
        sum_q += q[row];
      }
      main_term[ik] = alphas[ik] + sum_q - 0.5 * sq;
      if (main_term[ik] > mx) mx = main_term[ik];
    }
    double s = 0;
    for (int ik = 0; ik < k; ik++) s += exp(main_term[ik] - mx);
    slse += log(s) + mx;
  }
  double amx = alphas[0], as = 0;
  for (int ik = 1; ik < k; ik++) if (alphas[ik] > amx) amx = alphas[ik];
  for (int ik = 0; ik < k; ik++) as += exp(alphas[ik] - amx);
  int nn = d + m + 1;
  double lgd = 0.25 * d * (d - 1) * log(M_PI);
  for (int j = 1; j <= d; j++) lgd += lgamma(0.5 * nn + 0.5 * (1 - j));
  double c = nn * d * (log(gamma) - 0.5 * log(2.0)) - lgd, prior = 0;
  for (int ik = 0; ik < k; ik++) {
    const double *q = icf + ik * icf_size;
    double frob = 0, sum_q = 0;
    for (int id = 0; id < d; id++) { frob += exp(2 * q[id]); sum_q += q[id]; }
    for (int j = d; j < icf_size; j++) frob += q[j] * q[j];
    prior += 0.5 * gamma * gamma * frob - m * sum_q;
  }
  *err = -n * d * 0.5 * log(2 * M_PI) + slse - n * (log(as) + amx) + prior - k * c;
  free(main_term);
}

#define BENCH_KERNEL "gmm_inlined"
#include "harness/gmm.h"
