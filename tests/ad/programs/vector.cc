// C++ with exceptions on: std::vector temporaries (invoke + landing pads) inside the
// differentiated function, and an __enzyme_autodiff call that is itself an invoke.
#include <cmath>
#include <cstdio>
#include <vector>
extern int enzyme_dup, enzyme_const;
extern "C" double __enzyme_autodiff(void *, ...);

struct Model {
  std::vector<double> w;
  double eval(const double *x, int n) const {
    double s = 0;
    for (int i = 0; i < n; i++) s += w[i] * std::sin(x[i]);
    return s;
  }
};

double loss(const double *x, int n) {
  std::vector<double> tmp(n);
  for (int i = 0; i < n; i++) tmp[i] = x[i] * x[i];
  Model m{std::vector<double>(n, 0.5)};
  return m.eval(tmp.data(), n);
}

int main() {
  std::vector<double> x = {0.1, 0.2, 0.3, 0.7}, dx(4, 0.0);
  __enzyme_autodiff((void *)loss, enzyme_dup, x.data(), dx.data(), enzyme_const, 4);
  int bad = 0;
  for (int i = 0; i < 4; i++) {
    double want = 0.5 * std::cos(x[i] * x[i]) * 2 * x[i];
    if (std::fabs(dx[i] - want) > 1e-12) { bad++; std::fprintf(stderr, "MISMATCH %d %g %g\n", i, dx[i], want); }
  }
  if (bad) { std::printf("FAIL %d/4\n", bad); return 1; }
  std::printf("ok 4\n");
  return 0;
}
