/* Every math.h function in double and its f-suffixed float form, differentiated in
 * reverse mode and compared with central differences (build also with -ffast-math and
 * -fno-math-errno so the optimizer's intrinsics are covered). */
#include "hcheck.h"
extern int enzyme_const, enzyme_out;
double __enzyme_autodiff(void *, ...);
float __enzyme_autodiff_f(void *, ...);
typedef struct { double a, b; } d2;
typedef struct { float a, b; } f2;
d2 __enzyme_autodiff_d2(void *, ...);
f2 __enzyme_autodiff_f2(void *, ...);

/* each function wrapped so the call is direct (the optimizer may turn it into an
 * intrinsic) and composed with a polynomial so chain-rule errors show */
#define W(fn) \
  static double w_##fn(double x) { return fn(x * 1.1) * x; } \
  static float w_##fn##f(float x) { return fn##f(x * 1.1f) * x; }
W(sin) W(cos) W(tan) W(asin) W(acos) W(atan) W(sinh) W(cosh) W(tanh) W(asinh) W(acosh)
W(atanh) W(exp) W(exp2) W(expm1) W(log) W(log2) W(log10) W(log1p) W(sqrt) W(cbrt)
W(fabs) W(erf) W(erfc) W(tgamma) W(lgamma) W(floor) W(ceil) W(round) W(trunc) W(rint)
W(nearbyint)
/* two-argument functions */
static double p_pow(double x, double y) { return pow(x, y); }
static double p_atan2(double x, double y) { return atan2(x, y); }
static double p_hypot(double x, double y) { return hypot(x, y); }
static double p_fmin(double x, double y) { return fmin(x, y) * x; }
static double p_fmax(double x, double y) { return fmax(x, y) * y; }
static double p_fmod(double x, double y) { return fmod(x, y); }
static double p_copysign(double x, double y) { return copysign(x, y) * y; }
static double p_fma(double x, double y) { return fma(x, y, x * y); }
static double p_ldexp(double x, double y) { return ldexp(x, 3) * y; }
static double p_powi(double x, double y) { return pow(x, 3) + pow(y, 2) + pow(x, -2); }
static double p_sqrtpow(double x, double y) { return pow(x, 0.5) * pow(y, 1.5); }
static float q_pow(float x, float y) { return powf(x, y); }
static float q_atan2(float x, float y) { return atan2f(x, y); }
static float q_hypot(float x, float y) { return hypotf(x, y); }
static float q_fmin(float x, float y) { return fminf(x, y) * x; }
static float q_fmax(float x, float y) { return fmaxf(x, y) * y; }
static float q_fmod(float x, float y) { return fmodf(x, y); }
static float q_copysign(float x, float y) { return copysignf(x, y) * y; }
static float q_fma(float x, float y) { return fmaf(x, y, x * y); }
static float q_ldexp(float x, float y) { return ldexpf(x, 3) * y; }
static float q_powi(float x, float y) { return powf(x, 3) + powf(y, 2) + powf(x, -2); }
static float q_sqrtpow(float x, float y) { return powf(x, 0.5f) * powf(y, 1.5f); }

static char nm[64];
static const char *label(const char *fn, const char *suffix) {
  snprintf(nm, sizeof nm, "%s%s", fn, suffix);
  return nm;
}
static void check1(const char *name, double (*fd_)(double), float (*ff)(float), double x,
                   double gd, float gf) {
  double h = hc_h(x);
  hc_near(label(name, ""), gd, (fd_(x + h) - fd_(x - h)) / (2 * h), 1e-6);
  float hf = 1e-3f;
  double fdf = ((double)ff((float)x + hf) - (double)ff((float)x - hf)) / (2 * hf);
  hc_near(label(name, "f"), gf, fdf, 2e-3);
}
static void check2(const char *name, double (*fd_)(double, double), float (*ff)(float, float),
                   double x, double y, d2 gd, f2 gf) {
  double h = 1e-6;
  hc_near(label(name, " dx"), gd.a, (fd_(x + h, y) - fd_(x - h, y)) / (2 * h), 1e-6);
  hc_near(label(name, " dy"), gd.b, (fd_(x, y + h) - fd_(x, y - h)) / (2 * h), 1e-6);
  float hf = 1e-3f, xf = (float)x, yf = (float)y;
  hc_near(label(name, "f dx"), gf.a, ((double)ff(xf + hf, yf) - ff(xf - hf, yf)) / (2 * hf), 2e-3);
  hc_near(label(name, "f dy"), gf.b, ((double)ff(xf, yf + hf) - ff(xf, yf - hf)) / (2 * hf), 2e-3);
}
/* every AD call names its function directly */
#define C1(fn, x) check1(#fn, w_##fn, w_##fn##f, x, __enzyme_autodiff((void *)w_##fn, (double)(x)), \
                         __enzyme_autodiff_f((void *)w_##fn##f, (float)(x)))
#define C2(fn, x, y) check2(#fn, p_##fn, q_##fn, x, y, __enzyme_autodiff_d2((void *)p_##fn, (double)(x), (double)(y)), \
                            __enzyme_autodiff_f2((void *)q_##fn, (float)(x), (float)(y)))

int main(void) {
  C1(sin, 0.4); C1(cos, 0.4); C1(tan, 0.4); C1(asin, 0.4); C1(acos, 0.4); C1(atan, 0.4);
  C1(sinh, 0.4); C1(cosh, 0.4); C1(tanh, 0.4); C1(asinh, 0.4); C1(acosh, 1.4);
  C1(atanh, 0.4); C1(exp, 0.4); C1(exp2, 0.4); C1(expm1, 0.4); C1(log, 0.4);
  C1(log2, 0.4); C1(log10, 0.4); C1(log1p, 0.4); C1(sqrt, 0.4); C1(cbrt, 0.4);
  C1(fabs, -0.4); C1(fabs, 0.4); C1(erf, 0.4); C1(erfc, 0.4); C1(tgamma, 1.7); C1(lgamma, 1.7);
  /* piecewise-constant functions, away from their jumps */
  C1(floor, 0.83); C1(ceil, 0.83); C1(round, 0.83); C1(trunc, 0.83); C1(rint, 0.83);
  C1(nearbyint, 0.83);
  C2(pow, 1.3, 0.7); C2(atan2, 1.3, 0.7); C2(hypot, 1.3, 0.7); C2(fmin, 1.3, 0.7);
  C2(fmin, 0.3, 0.7); C2(fmax, 1.3, 0.7); C2(fmax, 0.3, 0.7); C2(fmod, 2.3, 0.7);
  C2(copysign, 1.3, 0.7); C2(copysign, 1.3, -0.7); C2(fma, 1.3, 0.7); C2(ldexp, 1.3, 0.7);
  C2(powi, 1.3, 0.7); C2(sqrtpow, 1.3, 0.7);
  return hc_done();
}



