/* Shadow contexts (enzyme_build/ad/contexts.py): each context holds its own shadow of every
 * global. Reverse mode accumulates the adjoints of globals into the context's shadows (a
 * global the program only reads, one it overwrites, an array), forward mode reads tangents
 * seeded there, split mode and vector forward mode (a width-2 context) use them too;
 * __enzyme_zero_shadows clears them; a call without a context leaves them alone. Checked
 * against central differences and closed forms. */
#include <enzyme/enzyme.h>
#include "hcheck.h"
#include <math.h>
void *__enzyme_augmentfwd(void *, ...);
typedef struct { double d[2]; } two;
two __enzyme_fwddiff2(void *, ...);

double a = 1.5, b = 2.0, hist = 0;   /* a: read and overwritten; b: only read */
double f(double x) { double m = b * x + sin(a); a = m; hist += m; return m * x; }
double g(double x) { return a * x * x + b; }

double w[3] = {0.5, -1.0, 2.0};
double scale = 1.25;
double energy(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += w[i % 3] * sin(x[i]) * scale;
  return s * s;
}
static double fd_global(double *p, const double *x) {
  double h = hc_h(*p), keep = *p;
  *p = keep + h; double up = energy(x, 4);
  *p = keep - h; double dn = energy(x, 4);
  *p = keep;
  return (up - dn) / (2 * h);
}

int main(void) {
  void *ctx = __enzyme_context(1);
  double *da = __enzyme_shadow(ctx, &a, 0), *db = __enzyme_shadow(ctx, &b, 0);
  *da = 0; *db = 0;
  double a0 = a, x = 0.7;
  double dx = __enzyme_autodiff((void *)f, enzyme_context, ctx, x);
  hc_near("f: d/dx", dx, 2 * b * x + sin(a0), 1e-12);
  hc_near("f: d/db", *db, x * x, 1e-12);
  hc_near("f: d/da (a's value before the call)", *da, x * cos(a0), 1e-12);
  __enzyme_zero_shadows(ctx);
  hc_near("zeroed a", *da, 0, 0);
  hc_near("zeroed b", *db, 0, 0);
  double dx2 = __enzyme_autodiff((void *)g, enzyme_context, ctx, x);
  hc_near("g: d/dx", dx2, 2 * a * x, 1e-12);
  hc_near("g: d/da", *da, x * x, 1e-12);
  hc_near("g: d/db", *db, 1, 1e-12);
  __enzyme_autodiff((void *)g, x);    /* no context: the context's shadows are untouched */
  hc_near("untouched by a call without context", *da, x * x, 1e-12);
  __enzyme_autodiff((void *)g, enzyme_context, ctx, x);   /* a second call accumulates */
  hc_near("accumulated", *da, 2 * x * x, 1e-12);

  /* an array global and a scalar: reverse, then forward and split mode with the context */
  double xs[4] = {0.1, 0.4, -0.3, 0.8}, dxs[4] = {0};
  void *c2 = __enzyme_context(1);
  double *dw = __enzyme_shadow(c2, w, 0), *ds = __enzyme_shadow(c2, &scale, 0);
  __enzyme_autodiff((void *)energy, enzyme_context, c2, enzyme_dup, xs, dxs, enzyme_const, 4);
  for (int j = 0; j < 3; j++) hc_near("energy: d/dw", dw[j], fd_global(&w[j], xs), 1e-6);
  double want_scale = fd_global(&scale, xs);
  hc_near("energy: d/dscale", *ds, want_scale, 1e-6);
  __enzyme_zero_shadows(c2);
  *ds = 1.0;
  double t[4] = {0};
  hc_near("forward along scale", __enzyme_fwddiff((void *)energy, enzyme_context, c2, enzyme_dup, xs, t,
                                                  enzyme_const, 4), want_scale, 1e-6);
  __enzyme_zero_shadows(c2);
  double dsplit[4] = {0};
  void *tape = __enzyme_augmentfwd((void *)energy, enzyme_context, c2, enzyme_dup, xs, dsplit, enzyme_const, 4);
  __enzyme_reverse((void *)energy, enzyme_context, c2, enzyme_dup, xs, dsplit, enzyme_const, 4, 1.0, tape);
  hc_near("split: d/dscale", *ds, want_scale, 1e-6);
  for (int i = 0; i < 4; i++) hc_near("split: d/dx", dsplit[i], dxs[i], 1e-12);

  /* width 2: lane 0 along scale, lane 1 along w[2] */
  void *c3 = __enzyme_context(2);
  *(double *)__enzyme_shadow(c3, &scale, 0) = 1.0;
  ((double *)__enzyme_shadow(c3, w, 1))[2] = 1.0;
  double t0[4] = {0}, t1[4] = {0};
  two r = __enzyme_fwddiff2((void *)energy, enzyme_context, c3, enzyme_width, 2, enzyme_dup, xs, t0, t1,
                            enzyme_const, 4);
  hc_near("width 2, lane 0", r.d[0], want_scale, 1e-6);
  hc_near("width 2, lane 1", r.d[1], fd_global(&w[2], xs), 1e-6);
  return hc_done();
}
