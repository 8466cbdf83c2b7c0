// std::complex<float> (__mulsc3/__divsc3, cabsf, cexpf, csqrtf) in reverse mode vs central differences.
#include "hcheck.h"
#include <complex>
extern "C" { extern int enzyme_dup, enzyme_const; float __enzyme_autodiff(void *, ...); }
using cf = std::complex<float>;
__attribute__((noinline)) float f(float a, float b) {
  cf z(a, b), w(b, 0.5f);
  z = z * w / (z + w);
  return std::abs(std::exp(z)) + std::real(std::sqrt(z));
}
static double fd(double a, double b) {
  using cd = std::complex<double>;
  cd z(a, b), w(b, 0.5);
  z = z * w / (z + w);
  return std::abs(std::exp(z)) + std::real(std::sqrt(z));
}
typedef struct { float a, b; } ab;
extern "C" ab __enzyme_autodiff2(void *, ...) __asm__("__enzyme_autodiff");
int main() {
  ab g = __enzyme_autodiff2((void *)f, 0.7f, 0.4f);
  double h = 1e-6;
  hc_near("a", g.a, (fd(0.7f + h, 0.4f) - fd(0.7f - h, 0.4f)) / (2 * h), 1e-4);
  hc_near("b", g.b, (fd(0.7f, 0.4f + h) - fd(0.7f, 0.4f - h)) / (2 * h), 1e-4);
  return hc_done();
}
