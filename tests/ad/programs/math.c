/* Every libm function and intrinsic with a rule, double and float, against finite differences.
 * Built twice: with errno (libm calls stay calls) and with -fno-math-errno (intrinsics). */
#define _GNU_SOURCE /* exp10 */
#include "adcheck.h"
double __enzyme_autodiff(void *, ...);
float __enzyme_autodifff(void *, ...);
typedef struct { double a, b; } D2;
D2 __enzyme_autodiff_d2(void *, ...);


#define ONE(name, fn) \
  __attribute__((noinline)) double d_##name(double x) { return fn(x) * 1.5; } \
  __attribute__((noinline)) float f_##name(float x) { return fn##f(x) * 1.5f; }
ONE(sqrt, sqrt) ONE(cbrt, cbrt) ONE(exp, exp) ONE(exp2, exp2) ONE(expm1, expm1)
ONE(log, log) ONE(log2, log2) ONE(log10, log10) ONE(log1p, log1p)
ONE(sin, sin) ONE(cos, cos) ONE(tan, tan) ONE(asin, asin) ONE(acos, acos) ONE(atan, atan)
ONE(sinh, sinh) ONE(cosh, cosh) ONE(tanh, tanh) ONE(asinh, asinh) ONE(acosh, acosh) ONE(atanh, atanh)
ONE(erf, erf) ONE(erfc, erfc) ONE(lgamma, lgamma) ONE(fabs, fabs)
ONE(floor, floor) ONE(ceil, ceil) ONE(trunc, trunc) ONE(round, round)

#define TWO(name, fn, yv) \
  __attribute__((noinline)) double d_##name(double x) { return fn(x, yv) + fn(yv, x); } \
  __attribute__((noinline)) float f_##name(float x) { return fn##f(x, (float)yv) + fn##f((float)yv, x); }
TWO(pow, pow, 1.7) TWO(atan2, atan2, 0.8) TWO(hypot, hypot, 0.9) TWO(fmod, fmod, 0.45)
TWO(copysign, copysign, -0.5) TWO(fmin, fmin, 0.6) TWO(fmax, fmax, 0.6)

__attribute__((noinline)) double d_powi(double x) { return __builtin_powi(x, 3) + __builtin_powi(x, -2); }
__attribute__((noinline)) double d_fma(double x) { return fma(x, x, 2.0 * x); }
__attribute__((noinline)) double d_rint(double x) { return rint(x) + nearbyint(x) + x; }

__attribute__((noinline)) double d_ldexp(double x) { return ldexp(x * x, 3); }
__attribute__((noinline)) double d_tgamma(double x) { return tgamma(x) * 2; }
__attribute__((noinline)) double d_exp10(double x) { return exp10(x); }

static double closed_powi(double x) { return 3 * x * x - 2 / (x * x * x); }

#define CHECK(name, x, lo)                                                                       \
  do {                                                                                           \
    ac_near(#name, __enzyme_autodiff((void *)d_##name, (double)(x)), AC_FD(d_##name, (double)(x)), 1e-5); \
    ac_near(#name "f", __enzyme_autodifff((void *)f_##name, (float)(x)), AC_FDF(f_##name, (x)), lo); \
  } while (0)

int main(void) {
  double pts[] = {0.35, 0.8, 1.6};
  for (int k = 0; k < 3; k++) {
    double x = pts[k], s = x / 2;   /* s in (0, 1) for asin/acos/atanh */
    CHECK(sqrt, x, 2e-3); CHECK(cbrt, x, 2e-3); CHECK(exp, x, 2e-3); CHECK(exp2, x, 2e-3);
    CHECK(expm1, x, 2e-3); CHECK(log, x, 2e-3); CHECK(log2, x, 2e-3); CHECK(log10, x, 2e-3);
    CHECK(log1p, x, 2e-3); CHECK(sin, x, 2e-3); CHECK(cos, x, 2e-3); CHECK(tan, s, 2e-3);
    CHECK(asin, s, 2e-3); CHECK(acos, s, 2e-3); CHECK(atan, x, 2e-3); CHECK(sinh, x, 2e-3);
    CHECK(cosh, x, 2e-3); CHECK(tanh, x, 2e-3); CHECK(asinh, x, 2e-3); CHECK(acosh, x + 1.2, 2e-3);
    CHECK(atanh, s, 2e-3); CHECK(erf, x, 2e-3); CHECK(erfc, x, 2e-3); CHECK(lgamma, x, 2e-3);
    CHECK(fabs, x - 1.0, 2e-3); CHECK(pow, x, 2e-3); CHECK(atan2, x, 2e-3); CHECK(hypot, x, 2e-3);
    CHECK(copysign, x, 2e-3); CHECK(fmin, x, 2e-3); CHECK(fmax, x, 2e-3);
    /* fmod and rounding are piecewise: compare at points away from the kinks */
    CHECK(fmod, x + 0.13, 2e-3);
    ac_near("floor", __enzyme_autodiff((void *)d_floor, x + 0.1), 0.0, 0.0);
    ac_near("ceil", __enzyme_autodiff((void *)d_ceil, x + 0.1), 0.0, 0.0);
    ac_near("trunc", __enzyme_autodiff((void *)d_trunc, x + 0.1), 0.0, 0.0);
    ac_near("round", __enzyme_autodiff((void *)d_round, x + 0.1), 0.0, 0.0);
    ac_near("roundf", __enzyme_autodifff((void *)f_round, (float)x + 0.1f), 0.0, 0.0);
    ac_near("rint", __enzyme_autodiff((void *)d_rint, x + 0.1), 1.0, 0.0);
    ac_near("powi", __enzyme_autodiff((void *)d_powi, x), closed_powi(x), 1e-12);
    ac_near("fma", __enzyme_autodiff((void *)d_fma, x), 2 * x + 2, 1e-12);
  }
  for (int k = 0; k < 3; k++) {
    double x = pts[k] + 0.5;
    ac_near("ldexp", __enzyme_autodiff((void *)d_ldexp, x), AC_FD(d_ldexp, x), 1e-6);
    ac_near("tgamma", __enzyme_autodiff((void *)d_tgamma, x), AC_FD(d_tgamma, x), 1e-6);
    ac_near("exp10", __enzyme_autodiff((void *)d_exp10, x), AC_FD(d_exp10, x), 1e-6);
  }
  ac_near("lgamma(5.5)", __enzyme_autodiff((void *)d_lgamma, 5.5), 1.5 * 1.6110931485817511, 1e-8);
  return ac_done();
}
