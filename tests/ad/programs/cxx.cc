// C++: operator new/delete for scratch buffers, a small class with a member array.
#include <cmath>
#include <cstdio>
#include <cstring>
extern "C" {
#include "adcheck.h"
}
extern int enzyme_dup, enzyme_const;
extern "C" double __enzyme_autodiff(void *, ...);

struct Poly {
  int n;
  double *c;
  __attribute__((noinline)) double eval(double x) const {
    double r = 0;
    for (int i = n - 1; i >= 0; i--) r = r * x + c[i];
    return r;
  }
};

__attribute__((noinline)) double fit(const double *coef, int n) {
  double *tmp = new double[n];
  for (int i = 0; i < n; i++) tmp[i] = coef[i] * coef[i];
  Poly *p = new Poly{n, tmp};
  double s = 0;
  for (int k = 0; k < 5; k++) s += std::sin(p->eval(0.1 * k));
  delete p;
  delete[] tmp;
  return s;
}

static double fit_f(const double *c, int n) { return fit(c, n); }

int main() {
  const int N = 4;
  double c[N] = {0.5, -0.2, 0.3, 0.8}, dc[N] = {0}, fd[N];
  __enzyme_autodiff((void *)fit, enzyme_dup, c, dc, enzyme_const, N);
  ac_fd_grad(fit_f, c, N, fd);
  for (int i = 0; i < N; i++) ac_near("fit", dc[i], fd[i], 1e-6);
  return ac_done();
}
