/* Shadows of globals that hold pointers (enzyme_build/ad/shadowinit.py). A global whose
 * initializer holds the address of another global starts its shadow pointing at that
 * global's shadow (Enzyme's shadow initializer): a struct of pointer and length, an array of
 * pointers with offsets, a plain pointer, and two levels (a struct pointing at a struct that
 * points at data). The pointers survive the reset after each top-level call and
 * __enzyme_zero_shadows (the floats are zeroed); a width-2 context gives the width; a pointer
 * set at run time points at the buffer the user gives its shadow. Checked against central
 * differences and closed forms. */
#include <enzyme/enzyme.h>
#include "hcheck.h"
#include <stdlib.h>
typedef struct { double d[2]; } two;
two __enzyme_fwddiff2(void *, ...) __asm__("__enzyme_fwddiff");

double data[3] = {1.0, 2.0, 3.0};
struct { double *base; long size; } desc = {data, 3};
double *rows[2] = {data, data + 1};
double *p = data + 2;
struct leaf { double *v; double w; } leaf0 = {data, 0.5};
struct { struct leaf *in; int pad; } outer = {&leaf0, 7};
double *heap;                                   /* set at run time */
struct { double *v; double scale; long n; } cfg;

__attribute__((noinline)) double sum(double x) {
  double s = 0;
  for (long i = 0; i < desc.size; i++) s += desc.base[i] * desc.base[i] * x;
  return s + *rows[1] * x + *p * *p;
}
__attribute__((noinline)) double nested(double x) {
  return outer.in->v[1] * outer.in->w * x * x;
}
double runtime(double x) {
  double s = 0;
  for (int i = 0; i < 4; i++) s += heap[i] * heap[i] * x;
  for (long i = 0; i < cfg.n; i++) s += cfg.v[i] * cfg.scale * x;
  return s;
}
static double fd(double (*f)(double), double *at, double x) {
  double keep = *at, h = hc_h(keep);
  *at = keep + h; double up = f(x);
  *at = keep - h; double dn = f(x);
  *at = keep;
  return (up - dn) / (2 * h);
}

int main(void) {
  double x = 0.7;
  void *ctx = __enzyme_context(1);
  double **dbase = __enzyme_shadow(ctx, &desc.base, 0);
  long *dsize = __enzyme_shadow(ctx, &desc.size, 0);
  double **drow1 = __enzyme_shadow(ctx, &rows[1], 0);
  double **dp = __enzyme_shadow(ctx, &p, 0);
  double *ddata = __enzyme_shadow(ctx, &data, 0);
  struct leaf *dleaf = __enzyme_shadow(ctx, &leaf0, 0);
  struct leaf **din = __enzyme_shadow(ctx, &outer.in, 0);
  hc_near("desc: shadow base is data's shadow", *dbase == ddata, 1, 0);
  hc_near("desc: size copied", (double)*dsize, 3, 0);
  hc_near("rows[1]: data's shadow + 1", *drow1 == ddata + 1, 1, 0);
  hc_near("p: data's shadow + 2", *dp == ddata + 2, 1, 0);
  hc_near("outer.in: leaf0's shadow", *din == dleaf, 1, 0);
  hc_near("leaf0.v: data's shadow", dleaf->v == ddata, 1, 0);

  for (int rep = 0; rep < 2; rep++) {   /* reverse; zeroing keeps the pointers */
    double dx = __enzyme_autodiff((void *)sum, enzyme_context, ctx, x);
    hc_near("sum: d/dx", dx, 1 + 4 + 9 + 2, 1e-12);
    for (int i = 0; i < 3; i++)
      hc_near("sum: d/d data[i]", ddata[i], fd(sum, &data[i], x), 1e-6);
    __enzyme_zero_shadows(ctx);
    hc_near("zeroed: data's shadow", ddata[1], 0, 0);
    hc_near("zeroed: desc's pointer kept", *dbase == ddata, 1, 0);
  }
  double dx = __enzyme_autodiff((void *)nested, enzyme_context, ctx, x);
  hc_near("nested: d/dx", dx, 2 * 2.0 * 0.5 * x, 1e-12);
  hc_near("nested: d/d data[1]", ddata[1], fd(nested, &data[1], x), 1e-6);
  hc_near("nested: d/d leaf0.w", dleaf->w, fd(nested, &leaf0.w, x), 1e-6);
  __enzyme_zero_shadows(ctx);

  ddata[0] = 1.0;   /* forward: tangents seeded in the context's shadow of data */
  double t = __enzyme_fwddiff((void *)sum, enzyme_context, ctx, x, 0.0);
  hc_near("sum forward: seeded data[0]", t, 2 * data[0] * x, 1e-12);

  void *ctx2 = __enzyme_context(2);   /* the context's width is the call's */
  double **dbase1 = __enzyme_shadow(ctx2, &desc.base, 1);
  double *d0 = __enzyme_shadow(ctx2, &data, 0), *d1 = __enzyme_shadow(ctx2, &data, 1);
  hc_near("width 2: lane 1's pointer", *dbase1 == d1, 1, 0);
  d0[1] = 1.0;
  d1[2] = 1.0;
  two t2 = __enzyme_fwddiff2((void *)sum, enzyme_context, ctx2, x, 0.0, 0.0);
  hc_near("width 2: lane 0", t2.d[0], 2 * data[1] * x + x, 1e-12);
  hc_near("width 2: lane 1", t2.d[1], 2 * data[2] * x + 2 * data[2], 1e-12);

  for (int rep = 0; rep < 2; rep++) {   /* no context, after the queries: shadows reset between calls */
    hc_near("sum plain reverse", __enzyme_autodiff((void *)sum, x), 16, 1e-12);
    hc_near("sum plain forward", __enzyme_fwddiff((void *)sum, x, 1.0), 16, 1e-12);
    hc_near("nested plain reverse", __enzyme_autodiff((void *)nested, x), 2 * 2.0 * 0.5 * x, 1e-12);
  }

  heap = malloc(4 * sizeof(double));   /* pointers set at run time: the user gives the shadows */
  cfg.v = malloc(3 * sizeof(double)); cfg.n = 3; cfg.scale = 0.5;
  for (int i = 0; i < 4; i++) heap[i] = i + 1;
  for (int i = 0; i < 3; i++) cfg.v[i] = i - 1;
  void *ctx3 = __enzyme_context(1);
  double **dheap = __enzyme_shadow(ctx3, &heap, 0);
  double **dv = __enzyme_shadow(ctx3, &cfg.v, 0);
  double *dscale = __enzyme_shadow(ctx3, &cfg.scale, 0);
  *dheap = calloc(4, sizeof(double));
  *dv = calloc(3, sizeof(double));
  for (int rep = 0; rep < 2; rep++) {
    dx = __enzyme_autodiff((void *)runtime, enzyme_context, ctx3, x);
    hc_near("runtime: d/dx", dx, 30 + 0.5 * 0, 1e-12);
    hc_near("runtime: d/d heap[3]", (*dheap)[3], fd(runtime, &heap[3], x), 1e-6);
    hc_near("runtime: d/d cfg.v[2]", (*dv)[2], fd(runtime, &cfg.v[2], x), 1e-6);
    hc_near("runtime: d/d cfg.scale", *dscale, fd(runtime, &cfg.scale, x), 1e-6);
    __enzyme_zero_shadows(ctx3);   /* the context's own shadows; the buffers are the user's */
    hc_near("zeroed: scale", *dscale, 0, 0);
    hc_near("zeroed: the user's buffer kept", *dheap != 0, 1, 0);
    for (int i = 0; i < 4; i++) (*dheap)[i] = 0;
    for (int i = 0; i < 3; i++) (*dv)[i] = 0;
  }
  return hc_done();
}
