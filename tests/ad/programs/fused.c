/* Reverse mode through the fused patterns: x * sqrt(x) (either order, float and double, the
 * sqrt and x with other uses too, inside a loop, at 0) and reciprocals 1 / d (whose
 * denominator partial is -q * q), checked against finite differences and closed forms in
 * combined and split mode. */
#include "adcheck.h"
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
float __enzyme_autodiff_f(void *, ...);
void __enzyme_autodiff_v(void *, ...);
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);

__attribute__((noinline)) double plummer(double r2) { double t = r2 * sqrt(r2); return 3.0 / t; }
__attribute__((noinline)) double other_uses(double x) { double s = sqrt(x); return s * x + s + 2 * x; }
__attribute__((noinline)) double swapped(double x) { return sqrt(x * x + 1) * (x * x + 1); }
__attribute__((noinline)) float single(float x) { return x * sqrtf(x); }
__attribute__((noinline)) float recip_f(float x) { return 1.0f / (x * x + 1.0f); }
/* reciprocal and plain quotients over one denominator */
__attribute__((noinline)) double ratios(double x) { double d = x * x + 0.5; return sin(x) / d + x / d - 1 / d; }
__attribute__((noinline)) double other_arg(double x) { return x * sqrt(x + 1); }
/* the reciprocal's result used twice, the sqrt's result kept for later too */
__attribute__((noinline)) double reused(double x) { double s = sqrt(x), q = 1 / (x * s); return q * q + q * s; }

/* a pair loop writing into a heap array (values cached per iteration), as in n-body */
__attribute__((noinline)) double forces(const double *p, int n) {
  double *a = calloc(n, sizeof(double)), e = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      if (i == j) continue;
      double d = p[j] - p[i], r2 = d * d + 0.01, inv3 = 1 / (r2 * sqrt(r2));
      a[i] += d * inv3;
    }
  for (int i = 0; i < n; i++) e += a[i] * a[i] * (1 + p[i]);
  free(a);
  return e;
}

int main(void) {
  double xs[] = {0.3, 1.0, 2.5, 17.0};
  for (int k = 0; k < 4; k++) {
    double x = xs[k];
    ac_near("plummer", __enzyme_autodiff((void *)plummer, x), AC_FD(plummer, x), 1e-6);
    ac_near("plummer closed form", __enzyme_autodiff((void *)plummer, x), -4.5 / (x * x * sqrt(x)), 1e-12);
    ac_near("other uses", __enzyme_autodiff((void *)other_uses, x), AC_FD(other_uses, x), 1e-6);
    ac_near("other uses closed form", __enzyme_autodiff((void *)other_uses, x), 1.5 * sqrt(x) + 0.5 / sqrt(x) + 2, 1e-12);
    ac_near("swapped", __enzyme_autodiff((void *)swapped, x), AC_FD(swapped, x), 1e-6);
    ac_near("single", __enzyme_autodiff_f((void *)single, (float)x), 1.5 * sqrt(x), 1e-5);
    ac_near("reciprocal float", __enzyme_autodiff_f((void *)recip_f, (float)x),
            -2 * x / ((x * x + 1) * (x * x + 1)), 1e-5);
    ac_near("ratios", __enzyme_autodiff((void *)ratios, x), AC_FD(ratios, x), 1e-6);
    ac_near("other arg", __enzyme_autodiff((void *)other_arg, x), AC_FD(other_arg, x), 1e-6);
    ac_near("reused", __enzyme_autodiff((void *)reused, x), AC_FD(reused, x), 1e-6);
  }
  /* x * sqrt(x) at 0: 1.5 sqrt(0) = 0 (the product rule through sqrt would give 0 * inf) */
  ac_near("at zero", __enzyme_autodiff((void *)single, 0.0f), 0.0, 0.0);
  double p[7] = {0.1, 0.9, -0.4, 1.7, 0.25, -1.1, 0.6}, g[7] = {0}, fd[7];
  __enzyme_autodiff_v((void *)forces, enzyme_dup, p, g, enzyme_const, 7);
  ac_fd_grad(forces, p, 7, fd);
  for (int i = 0; i < 7; i++) ac_near("forces", g[i], fd[i], 1e-6);
  /* split mode: the augmented forward pass, then the reverse */
  double gs[7] = {0};
  void *tape = __enzyme_augmentfwd((void *)forces, enzyme_dup, p, gs, enzyme_const, 7);
  __enzyme_reverse((void *)forces, enzyme_dup, p, gs, enzyme_const, 7, 1.0, tape);
  for (int i = 0; i < 7; i++) ac_near("forces split", gs[i], fd[i], 1e-6);
  return ac_done();
}
