/* x86 long double inside differentiated code: accumulations, long double arrays, sinl/expl/
 * sqrtl, values kept on the tape across loops (two cells each), in combined, split and
 * forward mode. */
#include "adcheck.h"
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);

double sq(double x) { long double t = (long double)x * x; return (double)(t * 3); }

double acc(const double *x, int n) {
  long double s = 0.0L;
  for (int i = 0; i < n; i++) s += (long double)x[i] * x[i] + sinl((long double)x[i]) / (1.5L + x[i] * x[i]);
  long double buf[4];
  for (int i = 0; i < 4; i++) buf[i] = s * (i + 1) + expl((long double)x[i % n]);
  long double t = 0;
  for (int i = 0; i < 4; i++) t += sqrtl(buf[i] * buf[i] + 1.0L);
  return (double)(t - 0.5L * s);
}

void layer(const double *x, double *out, int n) {
  for (int i = 0; i < n; i++) {
    long double v = (long double)x[i] * x[(i + 1) % n];
    out[i] = (double)(v * v + logl(2.0L + v * v));
  }
}

int main(void) {
  enum { N = 5 };
  ac_near("sq", __enzyme_autodiff((void *)sq, 1.5), 9.0, 1e-12);
  ac_near("sq fwd", __enzyme_fwddiff((void *)sq, 1.5, 1.0), 9.0, 1e-12);
  double x[N] = {0.3, -0.7, 1.2, 0.4, -0.1}, d[N] = {0};
  __enzyme_autodiff((void *)acc, enzyme_dup, x, d, enzyme_const, N);
  for (int i = 0; i < N; i++) {
    double xp[N], xm[N], h = ac_h(x[i]);
    memcpy(xp, x, sizeof x); memcpy(xm, x, sizeof x);
    xp[i] += h; xm[i] -= h;
    double fd = (acc(xp, N) - acc(xm, N)) / (2 * h);
    ac_near("acc", d[i], fd, 1e-6);
    double t[N] = {0}; t[i] = 1;
    ac_near("acc fwd", __enzyme_fwddiff((void *)acc, enzyme_dup, x, t, enzyme_const, N), d[i], 1e-9);
  }
  double out[N], dout[N], dx[N] = {0}, w[N] = {1, -2, 0.5, 3, 1.5};
  void *tape = __enzyme_augmentfwd((void *)layer, enzyme_dup, x, dx, enzyme_dup, out, dout, enzyme_const, N);
  for (int i = 0; i < N; i++) dout[i] = w[i];
  __enzyme_reverse((void *)layer, enzyme_dup, x, dx, enzyme_dup, out, dout, enzyme_const, N, tape);
  for (int i = 0; i < N; i++) {
    double xp[N], xm[N], op[N], om[N], h = ac_h(x[i]), fd = 0;
    memcpy(xp, x, sizeof x); memcpy(xm, x, sizeof x);
    xp[i] += h; xm[i] -= h;
    layer(xp, op, N); layer(xm, om, N);
    for (int k = 0; k < N; k++) fd += w[k] * (op[k] - om[k]) / (2 * h);
    ac_near("layer split", dx[i], fd, 1e-6);
  }
  return ac_done();
}
