/* The inverse functions (casin, cacos, catan, casinh, cacosh, catanh) and cproj: values
 * against glibc's own (reached through dlsym, which the library does not replace) in all
 * four quadrants, and derivatives in reverse and forward mode against central differences. */
#include "hcheck.h"
#include <complex.h>
#include <dlfcn.h>
#include <string.h>
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
typedef double complex (*cfn)(double complex);

__attribute__((noinline)) double f(const double *x, int n) {
  double complex z = x[0] + I * x[1];
  return creal(casin(z)) + cimag(cacos(z)) + creal(catan(z)) + cimag(casinh(z)) + creal(cacosh(z))
       + cimag(catanh(z)) + 0.5 * cimag(cproj(z));
}

int main(void) {
  void *m = dlopen("libm.so.6", RTLD_NOW);
  if (!m) { printf("no libm\n"); return 1; }
  const char *names[] = {"casin", "cacos", "catan", "casinh", "cacosh", "catanh"};
  cfn ours[] = {casin, cacos, catan, casinh, cacosh, catanh};
  double pts[][2] = {{0.3, 0.4}, {-0.7, 0.2}, {-0.5, -1.3}, {1.6, -0.3}, {2.5, 3.0}, {-0.2, 0.05}};
  for (int k = 0; k < 6; k++) {
    cfn ref = (cfn)dlsym(m, names[k]);
    for (int p = 0; p < 6; p++) {
      double complex z = pts[p][0] + I * pts[p][1], a = ours[k](z), b = ref(z);
      hc_near(names[k], creal(a), creal(b), 1e-12);
      hc_near(names[k], cimag(a), cimag(b), 1e-12);
    }
  }
  for (int p = 0; p < 6; p++) {
    double x[2] = {pts[p][0], pts[p][1]}, d[2] = {0};
    __enzyme_autodiff((void *)f, enzyme_dup, x, d, enzyme_const, 2);
    for (int i = 0; i < 2; i++) {
      double xp[2], xm[2], h = hc_h(x[i]);
      memcpy(xp, x, sizeof xp); memcpy(xm, x, sizeof xm);
      xp[i] += h; xm[i] -= h;
      double want = (f(xp, 2) - f(xm, 2)) / (2 * h);
      hc_near("reverse", d[i], want, 1e-6);
      double dx[2] = {0};
      dx[i] = 1;
      hc_near("forward", __enzyme_fwddiff((void *)f, enzyme_dup, x, dx, enzyme_const, 2), want, 1e-6);
    }
  }
  return hc_done();
}
