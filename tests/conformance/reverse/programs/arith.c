/* Every arithmetic operator and conversion, in double and float, through reverse mode
 * with active scalar arguments (struct return for several) and active float returns. */
#include "hcheck.h"
#include <stdint.h>
extern int enzyme_out, enzyme_const, enzyme_dup;
typedef struct { double a, b; } d2;
typedef struct { float a, b; } f2;
typedef struct { double a, b, c; } d3;
double __enzyme_autodiff(void *, ...);
d2 __enzyme_autodiff_d2(void *, ...);
f2 __enzyme_autodiff_f2(void *, ...);
d3 __enzyme_autodiff_d3(void *, ...);
float __enzyme_autodiff_f(void *, ...);

double add(double x, double y) { return x + y; }
double sub(double x, double y) { return x - y; }
double mul(double x, double y) { return x * y; }
double dvd(double x, double y) { return x / y; }
double neg(double x, double y) { return -x * y; }
double poly(double x, double y) { return 3 * x * x * x - 2 * x * y + y * y / 7 - 1.5; }
double fma_(double x, double y, double z) { return x * y + z; }
float addf(float x, float y) { return x + y; }
float subf(float x, float y) { return x - y; }
float mulf(float x, float y) { return x * y; }
float dvdf(float x, float y) { return x / y; }
float negf(float x, float y) { return -(x * y) + -y; }
/* conversions: float<->double, through int (zero derivative), through long double */
double f2d(float x, double y) { return (double)x * y; }
float d2f(double x, float y) { return (float)x * y; }
double viaint(double x, double y) { int k = (int)(x * 3); return k + x * y; }
double mixed(double x, float y) { float t = y * 2.0f; double u = t + x; return u * (float)x; }
double compound(double x, double y) { double s = x; s += y; s *= x; s -= y / 3; s /= (1 + y * y); return s; }
double incdec(double x, double y) { double s = x; s++; s *= y; s--; return s * s; }
double ternary(double x, double y) { return x > y ? x * x : y * x; }
double cmpsel(double x, double y) { double m = x < y ? x : y; double M = x < y ? y : x; return M * 2 - m * m; }
double intmul(double x, double y) { int n = 5; unsigned u = 3u; return n * x + u * y + (x * (short)-2); }
double u64conv(double x, double y) { uint64_t k = (uint64_t)(x * 100); double back = (double)k; return back + x * y; }
double frac(double x, double y) { double t = x * 10; return (t - (long)t) * y; }
float fmix(float x, float y) { double d = x; d = d * d * y; return (float)d + x / 3.0; }

typedef double (*dd_fn)(double, double);
static void check_dd(const char *name, dd_fn f, double x, double y) {
  d2 g = __enzyme_autodiff_d2((void *)f, x, y);
  double hx = hc_h(x), hy = hc_h(y);
  char buf[64];
  snprintf(buf, sizeof buf, "%s dx", name);
  hc_near(buf, g.a, (f(x + hx, y) - f(x - hx, y)) / (2 * hx), 1e-6);
  snprintf(buf, sizeof buf, "%s dy", name);
  hc_near(buf, g.b, (f(x, y + hy) - f(x, y - hy)) / (2 * hy), 1e-6);
}
typedef float (*ff_fn)(float, float);
static void check_ff(const char *name, ff_fn f, float x, float y) {
  f2 g = __enzyme_autodiff_f2((void *)f, x, y);
  float hx = 1e-2f, hy = 1e-2f;
  char buf[64];
  snprintf(buf, sizeof buf, "%s dx", name);
  hc_near(buf, g.a, (f(x + hx, y) - f(x - hx, y)) / (2 * hx), 3e-3);
  snprintf(buf, sizeof buf, "%s dy", name);
  hc_near(buf, g.b, (f(x, y + hy) - f(x, y - hy)) / (2 * hy), 3e-3);
}

int main(void) {
  check_dd("add", add, 0.7, -1.3);
  check_dd("sub", sub, 0.7, -1.3);
  check_dd("mul", mul, 0.7, -1.3);
  check_dd("div", dvd, 0.7, -1.3);
  check_dd("neg", neg, 0.7, -1.3);
  check_dd("poly", poly, 0.7, -1.3);
  check_dd("viaint", viaint, 0.7, -1.3);
  check_dd("compound", compound, 0.7, -1.3);
  check_dd("incdec", incdec, 0.7, -1.3);
  check_dd("ternary a", ternary, 0.7, -1.3);
  check_dd("ternary b", ternary, -0.7, 1.3);
  check_dd("cmpsel a", cmpsel, 0.7, -1.3);
  check_dd("cmpsel b", cmpsel, -0.7, 1.3);
  check_dd("intmul", intmul, 0.7, -1.3);
  check_dd("u64conv", u64conv, 0.734, 1.3);
  check_dd("frac", frac, 0.734, 1.3);
  check_ff("addf", addf, 0.7f, -1.3f);
  check_ff("subf", subf, 0.7f, -1.3f);
  check_ff("mulf", mulf, 0.7f, -1.3f);
  check_ff("divf", dvdf, 0.7f, -1.3f);
  check_ff("negf", negf, 0.7f, -1.3f);
  check_ff("fmix", fmix, 0.7f, -1.3f);
  {
    d3 g = __enzyme_autodiff_d3((void *)fma_, 0.5, -2.0, 3.0);
    hc_near("fma dx", g.a, -2.0, 1e-12);
    hc_near("fma dy", g.b, 0.5, 1e-12);
    hc_near("fma dz", g.c, 1.0, 1e-12);
  }
  {
    double r = __enzyme_autodiff((void *)f2d, enzyme_const, 0.5f, 1.5);
    hc_near("f2d const x, dy", r, 0.5, 1e-7);
  }
  {
    float r = __enzyme_autodiff_f((void *)d2f, enzyme_const, 0.5, 1.5f);
    hc_near("d2f const x, dy", r, 0.5, 1e-6);
  }
  {
    double r = __enzyme_autodiff((void *)mixed, 0.3, enzyme_const, 0.25f);
    /* d/dx [(0.5 + x) * (float)x] = (float)x + (0.5 + x); the cast is differentiable */
    hc_near("mixed dx", r, (double)(float)0.3 + 0.8, 1e-7); /* the cast's adjoint is a float */
  }
  return hc_done();
}
