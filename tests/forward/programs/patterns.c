/* Everyday C patterns in forward mode, each checked against central finite differences
 * along a direction: aliasing in/out buffers, in-place updates, float buffers and memcpy of
 * floats, 2-D arrays, breaks out of loops, switch in a loop, gathers through index arrays,
 * constants overwriting active memory, output structs, struct copies. */
#include "fwdcheck.h"
double __enzyme_fwddiff(void *, ...);
void __enzyme_fwddiffv(void *, ...);
#define N 8

/* in-place: x[i] = x[i] * x[i-1] + sin(x[i]); returns x[N-1] */
__attribute__((noinline)) double inplace(double *x, int n) {
  for (int i = 1; i < n; i++) x[i] = x[i] * x[i - 1] + sin(x[i]);
  return x[n - 1];
}
/* float buffers copied with memcpy, computed in single precision */
__attribute__((noinline)) double floats(const double *x, int n) {
  float a[N], b[N];
  for (int i = 0; i < n; i++) a[i] = (float)x[i] * 0.5f;
  memcpy(b, a, sizeof(float) * n);
  float s = 0.0f;
  for (int i = 0; i < n; i++) s += b[i] * b[(i + 3) % n];
  return (double)s;
}
/* 2-D array and a loop with break */
__attribute__((noinline)) double grid(const double *x, int n) {
  double g[4][4];
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) g[i][j] = x[(i * 4 + j) % n] * (i - j);
  double s = 0.0;
  for (int i = 0; i < 4; i++) {
    for (int j = 0; j < 4; j++) {
      if (g[i][j] > 1.5) break;
      s += g[i][j] * g[j][i];
    }
  }
  return s;
}
/* switch inside a loop, gather through an index array, constants stored into active memory */
__attribute__((noinline)) double gather(const double *x, const int *idx, double *work, int n) {
  for (int i = 0; i < n; i++) {
    switch (idx[i] % 3) {
      case 0: work[i] = x[idx[i]] * 2.0; break;
      case 1: work[i] = exp(x[idx[i]]); break;
      default: work[i] = 4.0;            /* overwrites: tangent becomes 0 */
    }
  }
  double s = 0.0;
  for (int i = 0; i < n; i++) s += work[i] * work[(i + 1) % n];
  return s;
}
/* an output struct written field by field and a struct copy */
typedef struct { double mean, var; int count; } Stats;
__attribute__((noinline)) void stats(const double *x, int n, Stats *out) {
  Stats s = {0.0, 0.0, n};
  for (int i = 0; i < n; i++) s.mean += x[i];
  s.mean /= n;
  for (int i = 0; i < n; i++) s.var += (x[i] - s.mean) * (x[i] - s.mean);
  s.var /= n;
  *out = s;                              /* struct copy (memcpy or field stores) */
}
/* the same buffer as input and output */
__attribute__((noinline)) void smooth(const double *in, double *out, int n) {
  double prev = in[0];
  for (int i = 1; i < n - 1; i++) { double cur = in[i]; out[i] = 0.25 * prev + 0.5 * cur + 0.25 * in[i + 1]; prev = cur; }
}
__attribute__((noinline)) double smooth_alias(double *x, int n) {
  smooth(x, x, n);
  double s = 0.0;
  for (int i = 0; i < n; i++) s += x[i] * x[i];
  return s;
}

/* a struct of two doubles returned in registers ({double, double}) and C99 complex values */
typedef struct { double re, im; } C2;
__attribute__((noinline)) C2 cmul(C2 a, C2 b) { C2 r = {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; return r; }
__attribute__((noinline)) double complexes(double t) {
  C2 a = {t, 2 * t}, b = {sin(t), 1.0};
  C2 c = cmul(a, b);
  double _Complex z = t + 1.0i * t * t;
  z = z + z * 0.5;
  return c.re * c.im + __real__ z * __imag__ z;
}

static const double X0[N] = {0.3, -0.2, 0.9, 0.45, -0.7, 0.15, 1.1, -0.35};
static const double V[N] = {1.0, 0.5, -0.25, 0.75, -1.0, 0.3, 0.2, -0.6};
#define H 1e-6
static void at(double *x, double h) { for (int i = 0; i < N; i++) x[i] = X0[i] + h * V[i]; }

/* directional derivative of a function of a mutable copy of X0 */
#define FD(expr_p, expr_m) (((expr_p) - (expr_m)) / (2 * H))

int main(void) {
  double x[N], dx[N], xp[N], xm[N];
  at(x, 0); memcpy(dx, V, sizeof dx); at(xp, H); at(xm, -H);
  double got = __enzyme_fwddiff((void *)inplace, x, dx, N);
  double want = FD(inplace(xp, N), inplace(xm, N));
  fc_near("inplace", got, want, 1e-6);
  for (int i = 0; i < N; i++) fc_near("inplace shadow", dx[i], (xp[i] - xm[i]) / (2 * H), 1e-6);

  at(x, 0); memcpy(dx, V, sizeof dx); at(xp, H); at(xm, -H);
  fc_near("floats", __enzyme_fwddiff((void *)floats, x, dx, N), FD(floats(xp, N), floats(xm, N)), 2e-3);
  fc_near("grid", __enzyme_fwddiff((void *)grid, x, dx, N), FD(grid(xp, N), grid(xm, N)), 1e-6);

  int idx[N] = {3, 1, 4, 1, 5, 0, 2, 6};
  double w[N], dw[N], wp[N], wm[N];
  memset(dw, 0, sizeof dw);
  got = __enzyme_fwddiff((void *)gather, x, dx, enzyme_const, idx, w, dw, N);
  want = FD(gather(xp, idx, wp, N), gather(xm, idx, wm, N));
  fc_near("gather", got, want, 1e-6);
  for (int i = 0; i < N; i++) fc_near("gather work", dw[i], (wp[i] - wm[i]) / (2 * H), 1e-6);

  Stats s, ds, sp, sm;
  memset(&ds, 0, sizeof ds);
  __enzyme_fwddiffv((void *)stats, x, dx, N, &s, &ds);
  stats(xp, N, &sp); stats(xm, N, &sm);
  fc_near("stats mean", ds.mean, (sp.mean - sm.mean) / (2 * H), 1e-6);
  fc_near("stats var", ds.var, (sp.var - sm.var) / (2 * H), 1e-6);
  fc_near("stats primal", s.var, (sp.var + sm.var) / 2, 1e-9);

  at(x, 0); memcpy(dx, V, sizeof dx); at(xp, H); at(xm, -H);
  got = __enzyme_fwddiff((void *)smooth_alias, x, dx, N);
  fc_near("alias", got, FD(smooth_alias(xp, N), smooth_alias(xm, N)), 1e-6);
  fc_near("complexes", __enzyme_fwddiff((void *)complexes, 0.7, 1.0), FD(complexes(0.7 + H), complexes(0.7 - H)), 1e-6);
  return fc_done();
}
