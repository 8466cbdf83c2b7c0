/* ABI variations with user-defined marker globals: every marker, defaults, several
 * active scalars returned as a struct (mixed with pointers and ints), float returns,
 * void returns, enzyme_dupnoneed, enzyme_const pointers, += into shadows. */
#include "hcheck.h"
int enzyme_dup = 0, enzyme_dupnoneed = 0, enzyme_out = 0, enzyme_const = 0;
double __enzyme_autodiff(void *, ...);
float __enzyme_autodiff_float(void *, ...);
void __enzyme_autodiff_void(void *, ...);
typedef struct { double a, b; } d2;
typedef struct { double a, b, c, d; } d4;
typedef struct { float a, b; } f2;
typedef struct { double a; float b; } df;
d2 __enzyme_autodiff_d2(void *, ...);
d4 __enzyme_autodiff_d4(void *, ...);
f2 __enzyme_autodiff_f2(void *, ...);
df __enzyme_autodiff_df(void *, ...);

static int side_effects;

/* pointer, int, scalar, pointer, scalar: two active scalars → struct in argument order */
double mix(const double *p, int n, double a, const double *q, double b) {
  double s = 0;
  for (int i = 0; i < n; i++) s += p[i] * q[i] * a + b * b * p[i];
  side_effects++;
  return s * a;
}
float fsum(const float *x, int n, float k) {
  float s = 0;
  for (int i = 0; i < n; i++) s += sinf(x[i]) * k;
  return s * s;
}
void vout(const double *x, double *y, int n, double scale) {
  for (int i = 0; i < n; i++) y[i] = scale * x[i] * x[i];
}
double four(double a, double b, double c, double d) { return a * b + c * d + a * d * d; }
double mixed_prec(double a, float b) { return a * b * b; }
double unused_args(double a, int k, double b) { (void)b; return a * k; }
double cptr(const double *w, const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += w[i] * exp(x[i]);
  return s;
}

int main(void) {
  enum { N = 5 };
  double p[N], q[N], dp[N], dq[N];
  for (int i = 0; i < N; i++) { p[i] = 0.2 * i - 0.3; q[i] = 1.0 - 0.15 * i; dp[i] = 1.0; dq[i] = -2.0; }
  double a = 0.7, b = -1.1;
  side_effects = 0;
  d2 g = __enzyme_autodiff_d2((void *)mix, enzyme_dup, p, dp, enzyme_const, N, enzyme_out, a,
                              enzyme_dup, q, dq, enzyme_out, b);
  hc_near("primal ran once", side_effects, 1, 0);
  {
    double S = 0, Sp = 0;
    for (int i = 0; i < N; i++) { S += p[i] * q[i]; Sp += p[i]; }
    /* f = (S a + b^2 Sp) a */
    hc_near("d/da", g.a, 2 * a * S + b * b * Sp, 1e-12);
    hc_near("d/db", g.b, 2 * b * Sp * a, 1e-12);
    for (int i = 0; i < N; i++) {
      hc_near("dp += ", dp[i], 1.0 + (q[i] * a + b * b) * a, 1e-12);
      hc_near("dq += ", dq[i], -2.0 + p[i] * a * a, 1e-12);
    }
  }
  /* the same call with default activities (no markers at all except the int) */
  for (int i = 0; i < N; i++) { dp[i] = 0; dq[i] = 0; }
  d2 g2 = __enzyme_autodiff_d2((void *)mix, p, dp, N, a, q, dq, b);
  hc_near("defaults d/da", g2.a, g.a, 1e-15);
  hc_near("defaults d/db", g2.b, g.b, 1e-15);
  /* a const pointer: its shadow is never touched */
  {
    double w[N] = {1, 2, 3, 4, 5}, x[N] = {0.1, 0.2, 0.3, 0.4, 0.5}, dx[N] = {0};
    __enzyme_autodiff((void *)cptr, enzyme_const, w, enzyme_dup, x, dx, enzyme_const, N);
    for (int i = 0; i < N; i++) hc_near("const w", dx[i], w[i] * exp(x[i]), 1e-12);
  }
  /* float return, float shadows, active float scalar */
  {
    float x[N] = {0.1f, 0.5f, -0.3f, 0.9f, 0.2f}, dx[N] = {0};
    float k = 1.5f;
    float dk = __enzyme_autodiff_float((void *)fsum, enzyme_dup, x, dx, enzyme_const, N, k);
    float S = 0;
    for (int i = 0; i < N; i++) S += sinf(x[i]);
    hc_near("float dk", dk, 2 * S * S * k, 1e-5);
    for (int i = 0; i < N; i++) hc_near("float dx", dx[i], 2 * S * k * k * cosf(x[i]), 1e-5);
  }
  /* void return: output through memory (dupnoneed), active scalar returned */
  {
    double x[N] = {0.1, 0.2, 0.3, 0.4, 0.5}, dx[N] = {0}, y[N], dy[N];
    for (int i = 0; i < N; i++) { dy[i] = i + 1.0; y[i] = -7; }
    double ds = __enzyme_autodiff((void *)vout, enzyme_dup, x, dx, enzyme_dupnoneed, y, dy, enzyme_const, N, 2.0);
    double want = 0;
    for (int i = 0; i < N; i++) {
      want += (i + 1.0) * x[i] * x[i];
      hc_near("void dx", dx[i], (i + 1.0) * 2 * 2.0 * x[i], 1e-12);
      hc_near("void dy consumed", dy[i], 0.0, 0.0);
    }
    hc_near("void dscale", ds, want, 1e-12);
    /* enzyme_dup output: the primal is computed too */
    for (int i = 0; i < N; i++) { dy[i] = 1.0; dx[i] = 0; }
    __enzyme_autodiff_void((void *)vout, enzyme_dup, x, dx, enzyme_dup, y, dy, enzyme_const, N, enzyme_const, 2.0);
    for (int i = 0; i < N; i++) {
      hc_near("dup output primal", y[i], 2.0 * x[i] * x[i], 1e-15);
      hc_near("const scale dx", dx[i], 4.0 * x[i], 1e-12);
    }
  }
  /* four active scalars; then some const */
  {
    d4 r = __enzyme_autodiff_d4((void *)four, 1.0, 2.0, 3.0, 4.0);
    hc_near("four a", r.a, 2.0 + 16.0, 1e-12);
    hc_near("four b", r.b, 1.0, 1e-12);
    hc_near("four c", r.c, 4.0, 1e-12);
    hc_near("four d", r.d, 3.0 + 8.0, 1e-12);
    d2 r2 = __enzyme_autodiff_d2((void *)four, enzyme_const, 1.0, 2.0, enzyme_const, 3.0, enzyme_out, 4.0);
    hc_near("four const b", r2.a, 1.0, 1e-12);
    hc_near("four const d", r2.b, 11.0, 1e-12);
  }
  /* double and float active scalars in one struct */
  {
    df r = __enzyme_autodiff_df((void *)mixed_prec, 1.5, 0.5f);
    hc_near("mixed a", r.a, 0.25, 1e-12);
    hc_near("mixed b", r.b, 1.5, 1e-6);
  }
  {
    d2 r = __enzyme_autodiff_d2((void *)unused_args, 2.0, 3, 5.0);
    hc_near("int arg", r.a, 3.0, 0);
    hc_near("unused active", r.b, 0.0, 0);
  }
  return hc_done();
}
