/* GMM objective with `restrict` on every pointer and the component parameters precomputed
 * into a full lower-triangular row-major Q per component (d*d, zeros above the diagonal),
 * so the inner product is a dense matrix-vector loop; scratch reused. */
#include "bench.h"

static double logsumexp(const double *restrict v, int n) {
  double mx = v[0];
  for (int i = 1; i < n; i++) if (v[i] > mx) mx = v[i];
  double s = 0;
  for (int i = 0; i < n; i++) s += exp(v[i] - mx);
  return log(s) + mx;
}

void gmm_objective(int d, int k, int n, const double *restrict alphas, const double *restrict means,
                   const double *restrict icf, const double *restrict x, double gamma, int m,
                   double *restrict err) {
  int icf_size = d * (d + 1) / 2;
  double *restrict qs = malloc(sizeof(double) * k * d * d); /* Q_k, row-major */
  double *restrict sum_qs = malloc(sizeof(double) * k);
  double *restrict main_term = malloc(sizeof(double) * k);
  double frob = 0;
  for (int ik = 0; ik < k; ik++) {
    const double *restrict q = icf + ik * icf_size;
    double *restrict qk = qs + ik * d * d;
    sum_qs[ik] = 0;
    for (int i = 0; i < d * d; i++) qk[i] = 0;
    for (int i = 0; i < d; i++) { qk[i * d + i] = exp(q[i]); sum_qs[ik] += q[i]; frob += qk[i * d + i] * qk[i * d + i]; }
    int idx = d;
    for (int col = 0; col < d; col++)
      for (int row = col + 1; row < d; row++) { qk[row * d + col] = q[idx]; frob += q[idx] * q[idx]; idx++; }
  }
  double slse = 0;
  for (int ix = 0; ix < n; ix++) {
    const double *restrict xi = x + ix * d;
    for (int ik = 0; ik < k; ik++) {
      const double *restrict qk = qs + ik * d * d, *restrict mu = means + ik * d;
      double sq = 0;
      for (int row = 0; row < d; row++) {
        double z = 0;
        for (int col = 0; col <= row; col++) z += qk[row * d + col] * (xi[col] - mu[col]);
        sq += z * z;
      }
      main_term[ik] = alphas[ik] + sum_qs[ik] - 0.5 * sq;
    }
    slse += logsumexp(main_term, k);
  }
  int nn = d + m + 1;
  double lgd = 0.25 * d * (d - 1) * log(M_PI), sum_all = 0;
  for (int j = 1; j <= d; j++) lgd += lgamma(0.5 * nn + 0.5 * (1 - j));
  for (int ik = 0; ik < k; ik++) sum_all += sum_qs[ik];
  double c = nn * d * (log(gamma) - 0.5 * log(2.0)) - lgd;
  *err = -n * d * 0.5 * log(2 * M_PI) + slse - n * logsumexp(alphas, k) + 0.5 * gamma * gamma * frob
         - m * sum_all - k * c;
  free(qs); free(sum_qs); free(main_term);
}

#define BENCH_KERNEL "gmm_restrict"
#include "harness/gmm.h"
