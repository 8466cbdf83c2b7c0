// Forward mode through C++: new[]/delete[], std::vector (operator new, memmove on growth),
// templates and references. Built with -fno-exceptions (invoke is not differentiable).
#include <cmath>
#include <cstdio>
#include <vector>
extern "C" {
extern int enzyme_dup, enzyme_const;
double __enzyme_fwddiff(void *, ...);
}

template <typename T> static T sq(const T &v) { return v * v; }

__attribute__((noinline)) double energy(const double *x, int n) {
  std::vector<double> acc;
  for (int i = 0; i < n; i++) acc.push_back(std::sin(x[i]) * x[(i + 1) % n]);  // grows: memmove
  double *tmp = new double[n];
  for (int i = 0; i < n; i++) tmp[i] = sq(acc[i]) + acc[(i + 2) % n];
  double e = 0.0;
  for (int i = 0; i < n; i++) e += tmp[i] * (i + 1);
  delete[] tmp;
  return e;
}

int main() {
  const int n = 9;
  double x[n], dx[n], xp[n], xm[n], h = 1e-6;
  for (int i = 0; i < n; i++) { x[i] = 0.1 * i - 0.3; dx[i] = 1.0 - 0.2 * i; }
  for (int i = 0; i < n; i++) { xp[i] = x[i] + h * dx[i]; xm[i] = x[i] - h * dx[i]; }
  double got = __enzyme_fwddiff((void *)energy, enzyme_dup, x, dx, n);
  double want = (energy(xp, n) - energy(xm, n)) / (2 * h);
  if (std::fabs(got - want) > 1e-6 * (1 + std::fabs(want))) {
    std::printf("FAIL got %.12g want %.12g\n", got, want);
    return 1;
  }
  std::printf("ok 1\n");
  return 0;
}
