// std::complex<double>: operators (__muldc3 / __divdc3 or inlined) and std::abs, exp, log,
// sqrt, pow, sin, cos, arg, norm, conj; reverse, forward and split mode vs central differences.
#include "hcheck.h"
#include <complex>
#include <cstring>
extern "C" {
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);
}
enum { N = 4 };
using cd = std::complex<double>;

__attribute__((noinline)) double f(const double *x, int n) {
  cd z(x[0], x[1]), w(x[2], x[3]);
  z = z * w + w * w;
  cd q = z / w;
  return std::real(z) + std::abs(z) + std::imag(std::exp(z)) + std::real(std::log(w)) + std::imag(q)
       + std::real(std::sqrt(w)) + std::real(std::pow(w, cd(0.5, 0.25))) + std::imag(std::sin(w))
       + std::real(std::cos(q)) + std::arg(w) + std::norm(q) + std::imag(std::conj(z) * w);
}

int main() {
  double x[N] = {0.31, -0.47, 0.83, 0.12}, want[N];
  for (int i = 0; i < N; i++) {
    double xp[N], xm[N], h = hc_h(x[i]);
    std::memcpy(xp, x, sizeof xp); std::memcpy(xm, x, sizeof xm);
    xp[i] += h; xm[i] -= h;
    want[i] = (f(xp, N) - f(xm, N)) / (2 * h);
  }
  double d[N] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, d, enzyme_const, N);
  for (int i = 0; i < N; i++) hc_near("reverse", d[i], want[i], 1e-6);
  for (int i = 0; i < N; i++) {
    double dx[N] = {0};
    dx[i] = 1;
    hc_near("forward", __enzyme_fwddiff((void *)f, enzyme_dup, x, dx, enzyme_const, N), want[i], 1e-6);
  }
  double ds[N] = {0};
  void *tape = __enzyme_augmentfwd((void *)f, enzyme_dup, x, ds, enzyme_const, N);
  __enzyme_reverse((void *)f, enzyme_dup, x, ds, enzyme_const, N, 1.0, tape);
  for (int i = 0; i < N; i++) hc_near("split", ds[i], want[i], 1e-6);
  return hc_done();
}
