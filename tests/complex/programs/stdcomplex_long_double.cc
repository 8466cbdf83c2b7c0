// std::complex<long double>: operators (through __mulxc3/__divxc3 or inline formulas),
// std::exp/std::log/std::abs/std::sqrt, in reverse and forward mode against central
// differences.
#include "hcheck.h"
#include <complex>
#include <cstring>
extern "C" {
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
}
using cld = std::complex<long double>;
enum { N = 4 };

__attribute__((noinline)) double f(const double *x, int n) {
  cld z(x[0], x[1]), w(x[2], x[3]);
  cld p = z * w / (cld(1.5L, 0.25L) + z * z);
  cld e = std::exp(p * 0.5L) + std::log(w) + std::sqrt(z * w + 2.0L);
  return (double)(e.real() + 2.0L * e.imag() + std::abs(z - w) + std::norm(p));
}

int main() {
  double x[N] = {0.61, -0.37, 0.83, 0.42}, want[N];
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
  return hc_done();
}
