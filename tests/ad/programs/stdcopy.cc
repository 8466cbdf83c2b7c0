// std::copy between arrays and std::vector<double>: at -O0 the copy ends in an untyped memmove
// inside a library helper; its element type comes from how the callers use the memory.
#include <algorithm>
#include <cmath>
#include <vector>
#include "adcheck.h"
extern "C" double __enzyme_autodiff(void *, ...);
extern int enzyme_dup, enzyme_const;

__attribute__((noinline)) double into_vector(const double *x, int n) {
  std::vector<double> v(n);
  std::copy(x, x + n, v.begin());
  double s = 0;
  for (int i = 0; i < n; i++) s += v[i] * sin(v[i]);
  return s;
}

// and back out: vector -> array, both directions in one function
__attribute__((noinline)) double round_trip(const double *x, double *out, int n) {
  std::vector<double> v(x, x + n);
  for (int i = 0; i < n; i++) v[i] = exp(v[i]) * (i + 1);
  std::copy(v.begin(), v.end(), out);
  double s = 0;
  for (int i = 0; i < n; i++) s += out[i] * out[(i + 1) % n];
  return s;
}

enum { N = 4 };
static double into_f(const double *x, int n) { return into_vector(x, n); }
static double round_f(const double *x, int n) { double o[N]; return round_trip(x, o, n); }

int main() {
  double x[N] = {0.1, 0.2, -0.3, 0.4}, dx[N] = {0}, fd[N];
  __enzyme_autodiff((void *)into_vector, enzyme_dup, x, dx, enzyme_const, N);
  ac_fd_grad(into_f, x, N, fd);
  for (int i = 0; i < N; i++) ac_near("std::copy into a vector", dx[i], fd[i], 1e-6);
  double dx2[N] = {0}, o[N], d_o[N] = {0};
  __enzyme_autodiff((void *)round_trip, enzyme_dup, x, dx2, enzyme_dup, o, d_o, enzyme_const, N);
  ac_fd_grad(round_f, x, N, fd);
  for (int i = 0; i < N; i++) ac_near("std::copy out of a vector", dx2[i], fd[i], 1e-6);
  return ac_done();
}
