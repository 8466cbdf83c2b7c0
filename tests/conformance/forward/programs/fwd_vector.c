/* Vector forward mode (enzyme_width N) on realistic kernels: widths 2, 3, 4 and 8, results
 * returned as arrays-in-structs or named fields, float and double, dup arrays with N shadows,
 * void functions with output arrays; every lane is compared with a scalar sweep and with
 * central differences. */
#include <string.h>
#include "hcheck.h"
extern int enzyme_dup, enzyme_dupnoneed, enzyme_const, enzyme_width;
double __enzyme_fwddiff(void *, ...);
typedef struct { double a, b; } d2;
typedef struct { double x, y, z; } d3;
typedef struct { double d[4]; } d4;
typedef struct { double d[8]; } d8;
typedef struct { float d[2]; } f2;
typedef struct { float x, y, z; } f3;
typedef struct { float d[8]; } f8;
d2 __enzyme_fwddiff_d2(void *, ...);
d3 __enzyme_fwddiff_d3(void *, ...);
d4 __enzyme_fwddiff_d4(void *, ...);
d8 __enzyme_fwddiff_d8(void *, ...);
f2 __enzyme_fwddiff_f2(void *, ...);
f3 __enzyme_fwddiff_f3(void *, ...);
f8 __enzyme_fwddiff_f8(void *, ...);
void __enzyme_fwddiff_void(void *, ...);
#define N 8

/* log-sum-exp with a malloc'd workspace: the Jacobian row is softmax(x) */
double lse(const double *x, int n) {
  double *e = malloc(n * sizeof *e), m = x[0], s = 0;
  for (int i = 1; i < n; i++) if (x[i] > m) m = x[i];
  for (int i = 0; i < n; i++) { e[i] = exp(x[i] - m); s += e[i]; }
  free(e);
  return m + log(s);
}

/* three scalars in, a helper chain */
__attribute__((noinline)) static double rosen(double a, double b) { return (1 - a) * (1 - a) + 100 * (b - a * a) * (b - a * a); }
double three(double a, double b, double c) { return rosen(a, b) * cos(c) + sqrt(a * a + b * b + c * c); }

float fthree(float a, float b, float c) { return a * b * c + sinf(a) * expf(0.5f * b) - c / (1.0f + b * b); }

/* a tiny MLP layer: y = tanh(W x + bias), returns |y|^2 */
typedef struct { double W[3][4]; double bias[3]; } layer;
double mlp(const layer *L, const double *x, double *y) {
  double s = 0;
  for (int r = 0; r < 3; r++) {
    double z = L->bias[r];
    for (int c = 0; c < 4; c++) z += L->W[r][c] * x[c];
    y[r] = tanh(z);
    s += y[r] * y[r];
  }
  return s;
}

/* in-place explicit Euler steps of a damped oscillator; void */
void euler(double *state, const double *params, int steps) {
  double k = params[0], c = params[1], dt = 0.05;
  for (int s = 0; s < steps; s++) {
    double x = state[0], v = state[1];
    state[0] = x + dt * v;
    state[1] = v + dt * (-k * sin(x) - c * v);
  }
}

static double lse_fd(const double *x, const double *dir) {
  double xp[N], xm[N], h = 1e-6;
  for (int i = 0; i < N; i++) { xp[i] = x[i] + h * dir[i]; xm[i] = x[i] - h * dir[i]; }
  return (lse(xp, N) - lse(xm, N)) / (2 * h);
}

int main(void) {
  double x[N] = {0.3, -1.2, 0.8, 2.0, -0.4, 0.1, 1.1, -2.2};
  /* width 8 on the identity directions: the full gradient of lse in one sweep */
  double dirs[8][N];
  for (int k = 0; k < 8; k++) for (int i = 0; i < N; i++) dirs[k][i] = (i == k);
  d8 g = __enzyme_fwddiff_d8((void *)lse, enzyme_width, 8, enzyme_dup, x, dirs[0], dirs[1], dirs[2], dirs[3],
                             dirs[4], dirs[5], dirs[6], dirs[7], enzyme_const, N);
  double m = 2.0, s = 0;
  for (int i = 0; i < N; i++) s += exp(x[i] - m);
  for (int k = 0; k < 8; k++) hc_near("lse w8 softmax", g.d[k], exp(x[k] - m) / s, 1e-12);
  /* width 4 with mixed directions, against finite differences */
  double v4[4][N];
  for (int k = 0; k < 4; k++) for (int i = 0; i < N; i++) v4[k][i] = sin(1.0 + k * 3 + i);
  d4 g4 = __enzyme_fwddiff_d4((void *)lse, enzyme_width, 4, enzyme_dup, x, v4[0], v4[1], v4[2], v4[3], enzyme_const, N);
  for (int k = 0; k < 4; k++) hc_near("lse w4 fd", g4.d[k], lse_fd(x, v4[k]), 1e-6);
  /* width 2 on lse, and the scalar sweep agrees */
  d2 g2 = __enzyme_fwddiff_d2((void *)lse, enzyme_width, 2, enzyme_dup, x, v4[2], v4[3], enzyme_const, N);
  hc_near("lse w2 lane 0", g2.a, __enzyme_fwddiff((void *)lse, enzyme_dup, x, v4[2], enzyme_const, N), 1e-13);
  hc_near("lse w2 lane 1", g2.b, g4.d[3], 1e-13);

  /* three active scalars at width 3: the gradient, as named fields */
  double a = 0.6, b = 0.2, c = -0.7, h = 1e-6;
  d3 t3 = __enzyme_fwddiff_d3((void *)three, enzyme_width, 3, a, 1.0, 0.0, 0.0, b, 0.0, 1.0, 0.0, c, 0.0, 0.0, 1.0);
  hc_near("three da", t3.x, (three(a + h, b, c) - three(a - h, b, c)) / (2 * h), 1e-6);
  hc_near("three db", t3.y, (three(a, b + h, c) - three(a, b - h, c)) / (2 * h), 1e-6);
  hc_near("three dc", t3.z, (three(a, b, c + h) - three(a, b, c - h)) / (2 * h), 1e-6);
  /* width 3 with a constant middle argument */
  d3 t3c = __enzyme_fwddiff_d3((void *)three, enzyme_width, 3, a, 1.0, 0.0, 2.0, enzyme_const, b, c, 0.0, 1.0, 1.0);
  hc_near("three const b lane 0", t3c.x, t3.x, 1e-12);
  hc_near("three const b lane 1", t3c.y, t3.z, 1e-12);
  hc_near("three const b lane 2", t3c.z, 2.0 * t3.x + t3.z, 1e-12);

  /* floats: width 2, width 3 (named fields), width 8 */
  float fa = 0.4f, fb = -0.3f, fc = 1.2f;
  double fda = ((double)fb * fc + cos(fa) * exp(0.5 * fb));
  double fdb = ((double)fa * fc + sin(fa) * 0.5 * exp(0.5 * fb) + fc * 2.0 * fb / ((1.0 + fb * fb) * (1.0 + fb * fb)));
  double fdc = ((double)fa * fb - 1.0 / (1.0 + fb * fb));
  f2 ft2 = __enzyme_fwddiff_f2((void *)fthree, enzyme_width, 2, fa, 1.0f, 0.0f, fb, 0.0f, 1.0f, fc, 0.0f, 0.0f);
  hc_near("f w2 da", ft2.d[0], fda, 1e-5); hc_near("f w2 db", ft2.d[1], fdb, 1e-5);
  f3 ft3 = __enzyme_fwddiff_f3((void *)fthree, enzyme_width, 3, fa, 1.0f, 0.0f, 0.0f, fb, 0.0f, 1.0f, 0.0f,
                               fc, 0.0f, 0.0f, 1.0f);
  hc_near("f w3 da", ft3.x, fda, 1e-5); hc_near("f w3 db", ft3.y, fdb, 1e-5); hc_near("f w3 dc", ft3.z, fdc, 1e-5);
  f8 ft8 = __enzyme_fwddiff_f8((void *)fthree, enzyme_width, 8,
                               fa, 1.0f, 0.0f, 0.0f, 1.0f, 2.0f, 0.0f, 0.0f, -1.0f,
                               fb, 0.0f, 1.0f, 0.0f, 1.0f, 0.0f, 3.0f, 0.0f, 0.0f,
                               fc, 0.0f, 0.0f, 1.0f, 1.0f, 0.0f, 0.0f, 0.5f, 0.0f);
  double want8[8] = {fda, fdb, fdc, fda + fdb + fdc, 2 * fda, 3 * fdb, 0.5 * fdc, -fda};
  for (int k = 0; k < 8; k++) hc_near("f w8", ft8.d[k], want8[k], 1e-5);

  /* struct of weights with N shadow structs, an output array with N shadows */
  layer L, dL[2];
  for (int r = 0; r < 3; r++) {
    L.bias[r] = 0.1 * r - 0.1;
    for (int q = 0; q < 4; q++) L.W[r][q] = 0.2 * sin(r * 4 + q + 1.0);
  }
  memset(dL, 0, sizeof dL);
  dL[0].W[1][2] = 1.0;  /* lane 0: d/dW[1][2] */
  dL[1].bias[2] = 1.0;  /* lane 1: d/dbias[2] */
  double xin[4] = {0.5, -0.25, 1.0, 0.75}, y[3], dy0[3] = {0}, dy1[3] = {0};
  d2 tl = __enzyme_fwddiff_d2((void *)mlp, enzyme_width, 2, enzyme_dup, &L, &dL[0], &dL[1], enzyme_const, xin,
                              enzyme_dupnoneed, y, dy0, dy1);
  double z1 = L.bias[1], z2 = L.bias[2];
  for (int q = 0; q < 4; q++) { z1 += L.W[1][q] * xin[q]; z2 += L.W[2][q] * xin[q]; }
  double s1 = 1 - tanh(z1) * tanh(z1), s2 = 1 - tanh(z2) * tanh(z2);
  hc_near("mlp lane 0 dy", dy0[1], s1 * xin[2], 1e-12);
  hc_near("mlp lane 0 other rows", dy0[0] + dy0[2], 0.0, 1e-15);
  hc_near("mlp lane 1 dy", dy1[2], s2, 1e-12);
  hc_near("mlp lane 0 ret", tl.a, 2 * tanh(z1) * s1 * xin[2], 1e-12);
  hc_near("mlp lane 1 ret", tl.b, 2 * tanh(z2) * s2, 1e-12);

  /* void function updating its state in place: the Jacobian columns of 20 Euler steps */
  double st[2] = {0.5, 0.0}, pr[2] = {2.0, 0.3};
  double ds[4][2] = {{1, 0}, {0, 1}, {0, 0}, {0, 0}}, dp[4][2] = {{0, 0}, {0, 0}, {1, 0}, {0, 1}};
  __enzyme_fwddiff_void((void *)euler, enzyme_width, 4, enzyme_dup, st, ds[0], ds[1], ds[2], ds[3],
                        enzyme_dup, pr, dp[0], dp[1], dp[2], dp[3], enzyme_const, 20);
  for (int k = 0; k < 4; k++) {
    double sp[2] = {0.5, 0.0}, sm[2] = {0.5, 0.0}, pp[2] = {2.0, 0.3}, pm[2] = {2.0, 0.3};
    if (k < 2) { sp[k] += h; sm[k] -= h; } else { pp[k - 2] += h; pm[k - 2] -= h; }
    euler(sp, pp, 20); euler(sm, pm, 20);
    for (int j = 0; j < 2; j++) hc_near("euler column", ds[k][j], (sp[j] - sm[j]) / (2 * h), 1e-6);
  }
  return hc_done();
}
