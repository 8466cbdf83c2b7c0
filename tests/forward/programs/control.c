/* Forward mode through control flow and calls: loops (phis get tangent phis), nested loops,
 * select, switch, early returns, recursion, nested calls sharing one derived function. */
#include "fwdcheck.h"
double __enzyme_fwddiff(void *, ...);

__attribute__((noinline)) double poly_loop(double x, int n) {
  double acc = 0.0, p = 1.0;
  for (int i = 0; i < n; i++) { acc += p / (i + 1); p *= x; }
  return acc;
}
__attribute__((noinline)) double nested(double x, int n) {
  double s = 0.0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j <= i; j++)
      s += sin(x * (i + 1)) * cos(x + j);
  return s;
}
__attribute__((noinline)) double while_loop(double x) {
  double y = x;
  int steps = 0;
  while (y < 100.0 && steps < 50) { y = y * 1.5 + x; steps++; }
  return y;
}
__attribute__((noinline)) double relu_mix(double x, double y) {
  double a = x > 0 ? x * y : 0.1 * x;     /* select */
  double b = fmax(a, y * y);
  return a + b;
}
__attribute__((noinline)) double piecewise(double x, int k) {
  switch (k) {
    case 0: return x * x;
    case 1: return sin(x);
    case 2: return exp(x) - x;
    default: return x;
  }
}
__attribute__((noinline)) double early(double x) {
  if (x > 2.0) return log(x);
  double y = x * x;
  if (y > 1.0) return y * x;
  return y;
}
__attribute__((noinline)) double rec_pow(double x, int n) {
  if (n == 0) return 1.0;
  return x * rec_pow(x, n - 1);
}
__attribute__((noinline)) double fib_like(double x, int n) {
  if (n < 2) return x;
  return fib_like(x, n - 1) * 0.5 + sin(fib_like(x, n - 2));
}
__attribute__((noinline)) double inner(double a, double b) { return a * exp(b); }
__attribute__((noinline)) double middle(double x) { return inner(x, x * 0.5) + inner(2.0, x); }
__attribute__((noinline)) double outer(double x, double y) { return middle(x) * middle(y) + inner(y, 1.0); }
__attribute__((noinline)) float fl_loop(float x, int n) {
  float s = 0.0f;
  for (int i = 0; i < n; i++) s = s * 0.5f + sinf(x * (float)i);
  return s;
}

static double g_n5(double x) { return poly_loop(x, 5); }
static double g_nested(double x) { return nested(x, 4); }
static double g_relu(double x) { return relu_mix(x, 0.7); }
static double g_pw0(double x) { return piecewise(x, 0); }
static double g_pw1(double x) { return piecewise(x, 1); }
static double g_pw2(double x) { return piecewise(x, 2); }
static double g_pw3(double x) { return piecewise(x, 3); }
static double g_fib(double x) { return fib_like(x, 6); }
static double g_outer(double x) { return outer(x, 0.3); }
static float g_fl(float x) { return fl_loop(x, 6); }
float __enzyme_fwddifff(void *, ...);

int main(void) {
  double pts[] = {-0.6, 0.4, 1.3, 2.7};
  for (int k = 0; k < 4; k++) {
    double x = pts[k];
    fc_near("poly_loop", __enzyme_fwddiff((void *)poly_loop, x, 1.0, 5), FC_FD(g_n5, x), 1e-6);
    fc_near("poly_loop n=0", __enzyme_fwddiff((void *)poly_loop, x, 1.0, 0), 0.0, 0.0);
    fc_near("nested", __enzyme_fwddiff((void *)nested, x, 1.0, 4), FC_FD(g_nested, x), 1e-6);
    fc_near("while", __enzyme_fwddiff((void *)while_loop, x + 3.0, 1.0), FC_FD(while_loop, x + 3.0), 1e-6);
    fc_near("relu", __enzyme_fwddiff((void *)relu_mix, x, 1.0, 0.7, 0.0), FC_FD(g_relu, x), 1e-6);
    fc_near("switch0", __enzyme_fwddiff((void *)piecewise, x, 1.0, 0), FC_FD(g_pw0, x), 1e-6);
    fc_near("switch1", __enzyme_fwddiff((void *)piecewise, x, 1.0, 1), FC_FD(g_pw1, x), 1e-6);
    fc_near("switch2", __enzyme_fwddiff((void *)piecewise, x, 1.0, 2), FC_FD(g_pw2, x), 1e-6);
    fc_near("switch3", __enzyme_fwddiff((void *)piecewise, x, 1.0, 3), FC_FD(g_pw3, x), 1e-6);
    fc_near("early", __enzyme_fwddiff((void *)early, x + 0.05, 1.0), FC_FD(early, x + 0.05), 1e-6);
    fc_near("rec_pow", __enzyme_fwddiff((void *)rec_pow, x, 1.0, 7), 7 * pow(x, 6), 1e-10);
    fc_near("fib_like", __enzyme_fwddiff((void *)fib_like, x, 1.0, 6), FC_FD(g_fib, x), 1e-6);
    fc_near("outer", __enzyme_fwddiff((void *)outer, x, 1.0, 0.3, 0.0), FC_FD(g_outer, x), 1e-6);
    fc_near("fl_loop", __enzyme_fwddifff((void *)fl_loop, (float)x, 1.0f, 6), FC_FDF(g_fl, x), 5e-3);
  }
  return fc_done();
}
