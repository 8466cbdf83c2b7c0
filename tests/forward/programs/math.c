/* Every libm function and intrinsic with a rule, double and float, in forward mode against
 * finite differences. Built twice: with errno (libm calls) and -fno-math-errno (intrinsics). */
#include "fwdcheck.h"
double __enzyme_fwddiff(void *, ...);
float __enzyme_fwddifff(void *, ...);

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
/* arithmetic instructions: fadd fsub fmul fdiv frem fneg, fpext/fptrunc */
__attribute__((noinline)) double d_arith(double x) {
  double a = x * x - 3.0 / x + (-x) * 0.5;
  float s = (float)x * 2.0f;
  return a / (1.0 + x) + fmod(x * 7.0, 2.5) + (double)(s * s);
}
static double d_arith_double_part(double x) { return (x * x - 3.0 / x + (-x) * 0.5) / (1.0 + x) + fmod(x * 7.0, 2.5); }
/* two active inputs: the tangent is the directional derivative */
__attribute__((noinline)) double d_two(double x, double y) { return atan2(x, y) * pow(x, y) + hypot(x, y); }

#define CHECK(name, x, lo)                                                                       \
  do {                                                                                           \
    fc_near(#name, __enzyme_fwddiff((void *)d_##name, (double)(x), 1.0), FC_FD(d_##name, (double)(x)), 1e-5); \
    fc_near(#name "f", __enzyme_fwddifff((void *)f_##name, (float)(x), 1.0f), FC_FDF(f_##name, (x)), lo); \
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
    CHECK(fmod, x + 0.13, 2e-3);
    fc_near("floor", __enzyme_fwddiff((void *)d_floor, x + 0.1, 1.0), 0.0, 0.0);
    fc_near("ceil", __enzyme_fwddiff((void *)d_ceil, x + 0.1, 1.0), 0.0, 0.0);
    fc_near("trunc", __enzyme_fwddiff((void *)d_trunc, x + 0.1, 1.0), 0.0, 0.0);
    fc_near("round", __enzyme_fwddiff((void *)d_round, x + 0.1, 1.0), 0.0, 0.0);
    fc_near("roundf", __enzyme_fwddifff((void *)f_round, (float)x + 0.1f, 1.0f), 0.0, 0.0);
    fc_near("rint", __enzyme_fwddiff((void *)d_rint, x + 0.1, 1.0), 1.0, 0.0);
    fc_near("powi", __enzyme_fwddiff((void *)d_powi, x, 1.0), 3 * x * x - 2 / (x * x * x), 1e-12);
    fc_near("fma", __enzyme_fwddiff((void *)d_fma, x, 1.0), 2 * x + 2, 1e-12);
    fc_near("arith", __enzyme_fwddiff((void *)d_arith, x, 1.0), FC_FD(d_arith_double_part, x) + 8 * x, 1e-6);
    /* a tangent scales linearly */
    fc_near("scaled", __enzyme_fwddiff((void *)d_sin, x, -2.5), -2.5 * 1.5 * cos(x), 1e-12);
    double y = 0.9, h = 1e-6, vx = 0.3, vy = -1.1;
    double fd = (d_two(x + h * vx, y + h * vy) - d_two(x - h * vx, y - h * vy)) / (2 * h);
    fc_near("two", __enzyme_fwddiff((void *)d_two, x, vx, y, vy), fd, 1e-6);
    /* enzyme_const: no tangent for y */
    double fdx = (d_two(x + h, y) - d_two(x - h, y)) / (2 * h);
    fc_near("const", __enzyme_fwddiff((void *)d_two, x, 1.0, enzyme_const, y), fdx, 1e-6);
  }
  fc_near("lgamma(5.5)", __enzyme_fwddiff((void *)d_lgamma, 5.5, 1.0), 1.5 * 1.6110931485817511, 1e-8);
  return fc_done();
}
