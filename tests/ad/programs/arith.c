/* Arithmetic instructions, float and double, select, phi, switch, several active scalars. */
#include "adcheck.h"
extern int enzyme_out, enzyme_const, enzyme_dup;
double __enzyme_autodiff(void *, ...);
float __enzyme_autodifff(void *, ...);
typedef struct { double a, b; } D2;
typedef struct { double a, b, c; } D3;
typedef struct { float a, b; } F2;
D2 __enzyme_autodiff_d2(void *, ...);
D3 __enzyme_autodiff_d3(void *, ...);
F2 __enzyme_autodiff_f2(void *, ...);

__attribute__((noinline)) double rational(double x) { return (x * x - 3.0 * x) / (x + 2.0) - (-x) * 0.5; }
__attribute__((noinline)) float rationalf(float x) { return (x * x - 3.0f * x) / (x + 2.0f) - x; }
__attribute__((noinline)) double mixed(double x) { float y = (float)x * 1.5f; return (double)(y * y) + x; }
__attribute__((noinline)) double choose(double x) { return x > 1.0 ? x * x : 3.0 * x; }
__attribute__((noinline)) double pick(double x, int k) {
  double r;
  switch (k) {
    case 0: r = x * x; break;
    case 1: r = sin(x); break;
    case 2: r = 1.0 / x; break;
    default: r = x;
  }
  return r * x;
}
static double pick0(double x) { return pick(x, 0); }
static double pick1(double x) { return pick(x, 1); }
static double pick2(double x) { return pick(x, 2); }
static double pick7(double x) { return pick(x, 7); }
__attribute__((noinline)) double two(double x, double y) { return x * y * y + x / y; }
__attribute__((noinline)) double three(double x, int n, double y, double z) { return x * y + n * z * z - x * z; }
__attribute__((noinline)) float twof(float x, float y) { return x * y + y; }
__attribute__((noinline)) double with_const(double x, double c) { return x * c * c; }

int main(void) {
  double xs[] = {0.7, 1.3, 2.5};
  for (int i = 0; i < 3; i++) {
    double x = xs[i];
    ac_near("rational", __enzyme_autodiff((void *)rational, x), AC_FD(rational, x), 1e-6);
    ac_near("rationalf", __enzyme_autodifff((void *)rationalf, (float)x), AC_FDF(rationalf, x), 2e-3);
    ac_near("mixed", __enzyme_autodiff((void *)mixed, x), 4.5 * x + 1.0, 1e-5);
    ac_near("choose", __enzyme_autodiff((void *)choose, x), x > 1.0 ? 2 * x : 3.0, 1e-12);
    ac_near("switch0", __enzyme_autodiff((void *)pick, x, 0), AC_FD(pick0, x), 1e-6);
    ac_near("switch1", __enzyme_autodiff((void *)pick, x, 1), AC_FD(pick1, x), 1e-6);
    ac_near("switch2", __enzyme_autodiff((void *)pick, x, 2), AC_FD(pick2, x), 1e-6);
    ac_near("switch7", __enzyme_autodiff((void *)pick, x, 7), AC_FD(pick7, x), 1e-6);
  }
  D2 g2 = __enzyme_autodiff_d2((void *)two, 1.5, 0.5);
  ac_near("two.dx", g2.a, 0.25 + 1 / 0.5, 1e-12);
  ac_near("two.dy", g2.b, 2 * 1.5 * 0.5 - 1.5 / 0.25, 1e-12);
  D3 g3 = __enzyme_autodiff_d3((void *)three, 1.5, enzyme_const, 3, 0.5, 2.0);
  ac_near("three.dx", g3.a, 0.5 - 2.0, 1e-12);
  ac_near("three.dy", g3.b, 1.5, 1e-12);
  ac_near("three.dz", g3.c, 3 * 2 * 2.0 - 1.5, 1e-12);
  F2 gf = __enzyme_autodiff_f2((void *)twof, 2.0f, 3.0f);
  ac_near("twof.dx", gf.a, 3.0, 1e-6);
  ac_near("twof.dy", gf.b, 3.0, 1e-6);
  ac_near("const marker", __enzyme_autodiff((void *)with_const, enzyme_out, 2.0, enzyme_const, 3.0), 9.0, 1e-12);
  return ac_done();
}
