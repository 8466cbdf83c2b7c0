/* Forward-mode calling shapes: a struct by value passed in memory, float results of double inputs, int-returning functions whose
 * tangents leave only through shadows, const function-pointer tables the optimizer
 * resolves, and a pointer rule used in vector mode. */
#include <string.h>
#include "hcheck.h"
extern int enzyme_dup, enzyme_dupnoneed, enzyme_const, enzyme_width;
double __enzyme_fwddiff(void *, ...);
float __enzyme_fwddifff(void *, ...);
int __enzyme_fwddiffi(void *, ...);
void __enzyme_fwddiffv(void *, ...);
typedef struct { double x, y, z, w; } vec4;
typedef struct { double a, b; } lanes2;
lanes2 __enzyme_fwddiff_l2(void *, ...);

double big(vec4 q, double s) { return s * (q.x * q.y + q.z * exp(q.w)); }
float mixed(double a, double b) { return (float)(a * b) + sinf((float)a); }

/* returns how many entries were clipped; the tangents leave through out */
int clip(const double *x, double *out, int n, double lim) {
  int c = 0;
  for (int i = 0; i < n; i++) {
    if (fabs(x[i]) > lim) { out[i] = copysign(lim, x[i]) + 0.1 * (x[i] - copysign(lim, x[i])); c++; }
    else out[i] = x[i];
  }
  return c;
}

/* a const table of kernels picked by an integer known at compile time */
static double k_sin(double v) { return sin(v); }
static double k_sq(double v) { return v * v * 0.5; }
static double (*const kernels[2])(double) = {k_sin, k_sq};
double apply_table(double v) { return kernels[0](v) + kernels[1](v); }

/* pointer rule used in vector mode: dy = 7 dx (the truth is 3 dx) */
__attribute__((noinline)) void triple(const double *x, double *y) { y[0] = 3.0 * x[0]; }
void triple_fwd(const double *x, const double *dx, double *y, double *dy) { y[0] = 3.0 * x[0]; dy[0] = 7.0 * dx[0]; }
void *__enzyme_register_derivative_triple[] = {(void *)triple, (void *)triple_fwd};
double use_triple(const double *x) { double y[1]; triple(x, y); return y[0] * x[0]; }

/* an output overwritten (its shadow's old contents are irrelevant) and one accumulated into
 * (its shadow's old contents are the incoming tangent) */
void sin_out(const double *x, double *out, int n) { for (int i = 0; i < n; i++) out[i] = sin(x[i]); }
void acc_sq(const double *x, double *acc, int n) { for (int i = 0; i < n; i++) acc[i] += x[i] * x[i]; }

double sinmix(double a, float b) { return sin(a) * b; }

int main(void) {
  double h = 1e-6;
  /* explicit markers on scalars; a float parameter among doubles */
  hc_near("enzyme_dup scalar", __enzyme_fwddiff((void *)sinmix, enzyme_dup, 0.5, 1.0, enzyme_const, 2.0f), cos(0.5) * 2, 1e-12);
  hc_near("float parameter tangent", __enzyme_fwddiff((void *)sinmix, enzyme_const, 0.5, 2.0f, 1.0f), sin(0.5), 1e-12);
  {
    double xs[2] = {0.3, 0.6}, dxs[2] = {1, 1}, out[2], dout[2] = {123, 456}, acc[2] = {1, 1}, dacc[2] = {10, 20};
    __enzyme_fwddiffv((void *)sin_out, enzyme_dup, xs, dxs, enzyme_dupnoneed, out, dout, enzyme_const, 2);
    hc_near("overwritten output tangent 0", dout[0], cos(0.3), 1e-15);
    hc_near("overwritten output tangent 1", dout[1], cos(0.6), 1e-15);
    __enzyme_fwddiffv((void *)acc_sq, enzyme_dup, xs, dxs, enzyme_dup, acc, dacc, enzyme_const, 2);
    hc_near("accumulated tangent 0", dacc[0], 10 + 0.6, 1e-15);
    hc_near("accumulated tangent 1", dacc[1], 20 + 1.2, 1e-15);
  }
  hc_near("enzyme_dupnoneed scalar", __enzyme_fwddiff((void *)sinmix, enzyme_dupnoneed, 0.5, 1.0, 2.0f, 0.0f), cos(0.5) * 2, 1e-12);
  vec4 q = {0.5, -1.0, 2.0, 0.3}, dq = {1.0, 0.0, -1.0, 2.0};
  vec4 qp = q, qm = q;
  qp.x += h; qm.x -= h; qp.z -= h; qm.z += h; qp.w += 2 * h; qm.w -= 2 * h;
  hc_near("struct in memory", __enzyme_fwddiff((void *)big, q, dq, 1.5, 0.0), (big(qp, 1.5) - big(qm, 1.5)) / (2 * h), 1e-6);
  hc_near("struct in memory, scalar tangent", __enzyme_fwddiff((void *)big, q, (vec4){0, 0, 0, 0}, 1.5, 1.0),
          big(q, 1.0), 1e-12);
  hc_near("float result of doubles", __enzyme_fwddifff((void *)mixed, 0.5, 1.0, 2.0, 0.0), 2.0 + cos(0.5), 1e-6);

  double x[5] = {0.5, -2.0, 1.2, 3.0, -0.1}, dx[5] = {1, 1, 1, 1, 1}, out[5], dout[5] = {0};
  int c = __enzyme_fwddiffi((void *)clip, enzyme_dup, x, dx, enzyme_dupnoneed, out, dout, enzyme_const, 5, enzyme_const, 1.0);
  (void)c;
  double want[5] = {1, 0.1, 0.1, 0.1, 1};
  for (int i = 0; i < 5; i++) hc_near("clip tangent", dout[i], want[i], 1e-15);

  hc_near("const kernel table", __enzyme_fwddiff((void *)apply_table, 0.7, 1.0), cos(0.7) + 0.7, 1e-12);

  double xa[1] = {2.0}, s0[1] = {1.0}, s1[1] = {-0.5};
  hc_near("pointer rule scalar", __enzyme_fwddiff((void *)use_triple, xa, s0), 7.0 * 2.0 + 6.0, 1e-12);
  lanes2 l = __enzyme_fwddiff_l2((void *)use_triple, enzyme_width, 2, xa, s0, s1);
  hc_near("pointer rule lane 0", l.a, 7.0 * 2.0 + 6.0, 1e-12);
  hc_near("pointer rule lane 1", l.b, -0.5 * (7.0 * 2.0 + 6.0), 1e-12);
  return hc_done();
}
