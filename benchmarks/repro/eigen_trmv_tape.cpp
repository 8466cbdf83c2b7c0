/* Reproducer (found by benchmarks/kernels/gmm_eigen.cpp, whose gradient is ~18x its primal):
 * a lower-triangular quadratic form |L v|^2 summed over many vectors v, written three ways --
 * Eigen's triangularView product, loops over Eigen element accessors, loops over plain arrays
 * -- each timed as primal and as gradient (reverse mode, w.r.t. L's entries and the data).
 *
 *   .venv/bin/enzyme-build c++ -O2 -fno-math-errno -I/usr/include/eigen3 \
 *       benchmarks/repro/eigen_trmv_tape.cpp -o /tmp/trmv -lm && /tmp/trmv
 *
 * Eigen keeps triangular_matrix_vector_product::run and the general_matrix_vector_product::run
 * it calls out of line (EIGEN_DONT_INLINE), so enzyme-build differentiates them in split mode,
 * once per product, and tapes every load of the factor and of the vector: the caller cannot
 * vouch that memory reached through the pointer stored in a MatrixXd stays unchanged until the
 * reverse piece runs, and the gemv's frame record keeps a cell for every value of its
 * unrolled remainder blocks, which run one after the other. The element-accessor loops are
 * inlined but keep L's loads per iteration too. Three runs on 2026-12-07 17:38 UTC (2 cores,
 * nothing else running):
 *
 *   triangularView  primal 184-202 us, gradient 1169-1362 us: 6.3-7.1x
 *   accessors       primal  40-41 us,  gradient  243 us:      5.9-6.1x
 *   plain arrays    primal  42-44 us,  gradient  230-238 us:  5.2-5.7x
 *
 * Six runs on 2026-12-07 19:42 UTC, the same derived code (load 0.5-0.8; the first run of each
 * batch of three ran about 1.5x faster than the next two, primal and gradient alike):
 *
 *   triangularView  primal  97-176 us, gradient  525-830 us:  4.7-5.4x
 *   accessors       primal  20-25 us,  gradient  142-212 us:  7.1-8.8x
 *   plain arrays    primal  20-25 us,  gradient  130-201 us:  6.4-8.5x
 *
 * So the shape itself -- a serial dot-product reduction per row, whose adjoint updates both
 * shadows element by element -- costs 5-9x here whatever the container, and Eigen's
 * out-of-line product costs about 5x more gradient time than the inlined loops (and 4-5x more
 * primal time: for d = 10 its blocking is overhead). gmm_eigen calls that product 25,000 times per
 * gradient with the factor inside a std::vector<MatrixXd>, where the tape grows to ~100 MB. */
#include <chrono>
#include <cstdio>
#include <vector>
#include <Eigen/Dense>

extern int enzyme_dup, enzyme_const;
extern "C" void __enzyme_autodiff(void *, ...);

/* the lower-triangular factor, column by column from q; the k-th data vector, shifted */
static Eigen::MatrixXd lower_factor(const double *q, int d) {
  Eigen::MatrixXd L = Eigen::MatrixXd::Zero(d, d);
  for (int j = 0, p = 0; j < d; j++)
    for (int i = j; i < d; i++) L(i, j) = q[p++];
  return L;
}

static void sample(Eigen::VectorXd &v, const double *x, int k) {
  const int d = v.size();
  for (int i = 0; i < d; i++) v(i) = x[(k * d + i) % (4 * d)] - 0.5;
}

__attribute__((noinline)) double with_trmv(const double *q, const double *x, int d, int n) {
  const Eigen::MatrixXd L = lower_factor(q, d);
  Eigen::VectorXd v(d);
  double s = 0;
  for (int k = 0; k < n; k++) {
    sample(v, x, k);
    s += (L.triangularView<Eigen::Lower>() * v).squaredNorm();
  }
  return s;
}

__attribute__((noinline)) double with_accessors(const double *q, const double *x, int d, int n) {
  const Eigen::MatrixXd L = lower_factor(q, d);
  Eigen::VectorXd v(d);
  double s = 0;
  for (int k = 0; k < n; k++) {
    sample(v, x, k);
    for (int i = 0; i < d; i++) {
      double t = 0;
      for (int j = 0; j <= i; j++) t += L(i, j) * v(j);
      s += t * t;
    }
  }
  return s;
}

__attribute__((noinline)) double with_arrays(const double *q, const double *x, int d, int n) {
  std::vector<double> L(d * d, 0.0), v(d);
  for (int j = 0, p = 0; j < d; j++)
    for (int i = j; i < d; i++) L[i + j * d] = q[p++];
  double s = 0;
  for (int k = 0; k < n; k++) {
    for (int i = 0; i < d; i++) v[i] = x[(k * d + i) % (4 * d)] - 0.5;
    for (int i = 0; i < d; i++) {
      double t = 0;
      for (int j = 0; j <= i; j++) t += L[i + j * d] * v[j];
      s += t * t;
    }
  }
  return s;
}

template <class F> static double best_seconds(F &&run) {
  double best = 1e30;
  for (int r = 0; r < 20; r++) {
    auto t0 = std::chrono::steady_clock::now();
    run();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

typedef double (*objective)(const double *, const double *, int, int);

template <objective f> static void measure(const char *name) {
  const int d = 10, n = 2000;
  std::vector<double> q(d * (d + 1) / 2), x(4 * d), dq(q.size()), dx(x.size());
  for (size_t i = 0; i < q.size(); i++) q[i] = 0.1 + 0.01 * i;
  for (size_t i = 0; i < x.size(); i++) x[i] = 0.02 * i;
  volatile double sink = 0;
  double primal = best_seconds([&] { sink = f(q.data(), x.data(), d, n); });
  double grad = best_seconds([&] {
    __enzyme_autodiff((void *)f, enzyme_dup, q.data(), dq.data(), enzyme_dup, x.data(), dx.data(),
                      enzyme_const, d, enzyme_const, n);
  });
  std::printf("%-15s primal %7.1f us, gradient %7.1f us: %5.1fx\n", name, primal * 1e6, grad * 1e6, grad / primal);
}

int main() {
  measure<with_trmv>("triangularView");
  measure<with_accessors>("accessors");
  measure<with_arrays>("plain arrays");
  return 0;
}
