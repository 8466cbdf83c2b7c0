// Ways C++ code names the function to differentiate: a captureless lambda converted with
// unary +, a template instantiation, an overload picked by a cast, a static member
// function, a function in a namespace, a function-local static lambda pointer.
#include "hcheck.h"
#include <cmath>
extern "C" double __enzyme_autodiff(void *, ...);
template <typename T> T poly(T x) { return x * x * x - 2 * x; }
double sq(double x) { return x * x; }
float sq(float x) { return x * x * x; }
struct Phys { static double energy(double v) { return 0.5 * 3.0 * v * v; } };
namespace ns { double gauss(double x) { return std::exp(-x * x); } }
int main() {
  auto lam = [](double x) { return std::sin(x) * x; };
  double x = 0.7;
  hc_near("lambda", __enzyme_autodiff((void *)+lam, x), std::cos(x) * x + std::sin(x), 1e-12);
  double (*fp)(double) = lam;
  hc_near("lambda via pointer", __enzyme_autodiff((void *)fp, x), std::cos(x) * x + std::sin(x), 1e-12);
  hc_near("template", __enzyme_autodiff((void *)poly<double>, x), 3 * x * x - 2, 1e-12);
  hc_near("overload", __enzyme_autodiff((void *)(double (*)(double))sq, x), 2 * x, 1e-12);
  hc_near("static member", __enzyme_autodiff((void *)&Phys::energy, x), 3 * x, 1e-12);
  hc_near("namespace", __enzyme_autodiff((void *)ns::gauss, x), -2 * x * std::exp(-x * x), 1e-12);
  return hc_done();
}
