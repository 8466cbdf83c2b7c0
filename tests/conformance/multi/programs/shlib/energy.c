/* A differentiable shared library: a pair-potential energy and exported wrappers that
 * return its gradient (reverse mode), a directional derivative (forward mode) and a
 * Hessian-free pair of directional derivatives (vector forward mode). */
#include <math.h>
/* the exported API; a build with -fvisibility=hidden still exports these */
#define API __attribute__((visibility("default")))
extern int enzyme_dup, enzyme_const, enzyme_width;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
typedef struct { double a, b; } two_t;
two_t __enzyme_fwddiff2(void *, ...);

static inline double pair(double a, double b) { double d = a - b; return exp(-d * d) + 0.1 * d * d * d * d; }
__attribute__((noinline)) static double confine(double v) { return log(cosh(v)); }

API double energy(const double *x, int n) {
  double e = 0;
  for (int i = 0; i < n; i++) {
    e += confine(x[i]);
    for (int j = i + 1; j < n; j++) e += pair(x[i], x[j]) / (1.0 + j - i);
  }
  return e;
}

API void energy_grad(const double *x, double *g, int n) {
  for (int i = 0; i < n; i++) g[i] = 0.0;
  __enzyme_autodiff((void *)energy, enzyme_dup, x, g, enzyme_const, n);
}

API double energy_dir(const double *x, const double *v, int n) {
  return __enzyme_fwddiff((void *)energy, enzyme_dup, x, (double *)v, enzyme_const, n);
}

API void energy_dir2(const double *x, const double *v0, const double *v1, int n, double *out) {
  two_t r = __enzyme_fwddiff2((void *)energy, enzyme_width, 2, enzyme_dup, x, (double *)v0, (double *)v1,
                              enzyme_const, n);
  out[0] = r.a;
  out[1] = r.b;
}
