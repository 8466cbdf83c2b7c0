/* A thread-local running total written with active values, in forward, vector and reverse mode. */
#include "hcheck.h"
double __enzyme_fwddiff(void *, ...);
double __enzyme_autodiff(void *, ...);
extern int enzyme_width;
typedef struct { double a, b; } two;
two __enzyme_fwddiff2(void *, ...);
/* a per-thread running total (a thread-safe replacement for a static accumulator) */
static _Thread_local double running;
__attribute__((noinline)) static void add(double v) { running += v; }
double f(double x) { running = 0; add(sin(x)); add(x * x); return running * 2.0; }
int main(void) {
  double want = 2 * (cos(0.5) + 1.0);
  hc_near("forward", __enzyme_fwddiff((void *)f, 0.5, 1.0), want, 1e-12);
  hc_near("reverse", __enzyme_autodiff((void *)f, 0.5), want, 1e-12);
  two t = __enzyme_fwddiff2((void *)f, enzyme_width, 2, 0.5, 1.0, -2.0);
  hc_near("vector lane 0", t.a, want, 1e-12);
  hc_near("vector lane 1", t.b, -2.0 * want, 1e-12);
  return hc_done();
}
