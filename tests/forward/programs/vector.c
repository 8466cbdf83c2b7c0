/* Vector forward mode (enzyme_width N): N tangents per active value in one sweep, compared
 * with N scalar sweeps. Result shapes under the x86-64 ABI: {double, double} (width 2),
 * sret struct (width 3 and 4 doubles), <2 x float> and {<2 x float>, <2 x float>} (floats). */
#include "fwdcheck.h"
typedef struct { double d[2]; } vec2;
typedef struct { double d[3]; } vec3;
typedef struct { double d[4]; } vec4;
typedef struct { float d[2]; } fvec2;
typedef struct { float d[4]; } fvec4;
double __enzyme_fwddiff(void *, ...);
float __enzyme_fwddifff(void *, ...);
vec2 __enzyme_fwddiff2(void *, ...);
vec3 __enzyme_fwddiff3(void *, ...);
vec4 __enzyme_fwddiff4(void *, ...);
fvec2 __enzyme_fwddifff2(void *, ...);
fvec4 __enzyme_fwddifff4(void *, ...);
void __enzyme_fwddiffv(void *, ...);
#define N 5

__attribute__((noinline)) double f2(double x, double y) { return sin(x) * y * y + exp(x * y); }
__attribute__((noinline)) float g1(float x) { return x * x * sinf(x); }

__attribute__((noinline)) double helper(const double *v, int n, double s) {
  double *tmp = malloc(n * sizeof(double));
  for (int i = 0; i < n; i++) tmp[i] = v[i] * s;
  double r = 0.0;
  for (int i = 0; i < n; i++) r += tmp[i] * tmp[(i + 1) % n];
  free(tmp);
  return r;
}
/* out[i] = tanh(x[i]) * helper(x); returns sum(out) */
__attribute__((noinline)) double layer(const double *x, double *out, int n, double s) {
  double h = helper(x, n, s);
  double r = 0.0;
  for (int i = 0; i < n; i++) { out[i] = tanh(x[i]) * h; r += out[i]; }
  return r;
}

/* a written global (one forward shadow global per lane) */
double g_state;
__attribute__((noinline)) double stateful(double x) { g_state = x * x; g_state *= sin(x); return g_state + x; }
/* pointer table: each lane has its own shadow table of shadow rows */
__attribute__((noinline)) double table_sum(double **rows, int r, int c) {
  double s = 0.0;
  for (int i = 0; i < r; i++)
    for (int j = 0; j < c; j++) { rows[i][j] = rows[i][j] * rows[i][j]; s += rows[i][j] * (i + j + 1); }
  return s;
}

int main(void) {
  double x = 0.7, y = -0.4;
  /* scalar sweeps: the columns of the Jacobian */
  double jx = __enzyme_fwddiff((void *)f2, x, 1.0, y, 0.0);
  double jy = __enzyme_fwddiff((void *)f2, x, 0.0, y, 1.0);
  vec2 v2 = __enzyme_fwddiff2((void *)f2, enzyme_width, 2, x, 1.0, 0.0, y, 0.0, 1.0);
  fc_near("w2[0]", v2.d[0], jx, 1e-14); fc_near("w2[1]", v2.d[1], jy, 1e-14);
  vec3 v3 = __enzyme_fwddiff3((void *)f2, enzyme_width, 3, x, 1.0, 0.0, 2.0, y, 0.0, 1.0, 3.0);
  fc_near("w3[0]", v3.d[0], jx, 1e-14); fc_near("w3[1]", v3.d[1], jy, 1e-14);
  fc_near("w3[2]", v3.d[2], 2.0 * jx + 3.0 * jy, 1e-14);
  vec4 v4 = __enzyme_fwddiff4((void *)f2, enzyme_width, 4, x, 1.0, 0.0, 0.5, -1.0, y, 0.0, 1.0, 0.5, 2.0);
  fc_near("w4[0]", v4.d[0], jx, 1e-14); fc_near("w4[1]", v4.d[1], jy, 1e-14);
  fc_near("w4[2]", v4.d[2], 0.5 * jx + 0.5 * jy, 1e-14);
  fc_near("w4[3]", v4.d[3], -jx + 2.0 * jy, 1e-14);
  /* floats */
  float gx = 0.9f, dg = __enzyme_fwddifff((void *)g1, gx, 1.0f);
  fvec2 f2v = __enzyme_fwddifff2((void *)g1, enzyme_width, 2, gx, 1.0f, 2.0f);
  fc_near("fw2[0]", f2v.d[0], dg, 1e-6); fc_near("fw2[1]", f2v.d[1], 2 * dg, 1e-6);
  fvec4 f4v = __enzyme_fwddifff4((void *)g1, enzyme_width, 4, gx, 1.0f, 2.0f, -1.0f, 0.0f);
  fc_near("fw4[0]", f4v.d[0], dg, 1e-6); fc_near("fw4[1]", f4v.d[1], 2 * dg, 1e-6);
  fc_near("fw4[2]", f4v.d[2], -dg, 1e-6); fc_near("fw4[3]", f4v.d[3], 0.0, 0.0);

  /* arrays: width 4 with 4 shadows per dup pointer, against 4 scalar sweeps */
  double xs[N] = {0.3, -0.5, 0.8, 0.1, -0.9}, out[N], dirs[4][N], douts[4][N], sdout[N];
  for (int k = 0; k < 4; k++)
    for (int i = 0; i < N; i++) { dirs[k][i] = (i == k) ? 1.0 : 0.1 * (k + 1) * (i - 2); douts[k][i] = 0; }
  vec4 r4 = __enzyme_fwddiff4((void *)layer, enzyme_width, 4, enzyme_dup, xs, dirs[0], dirs[1], dirs[2], dirs[3],
                              enzyme_dup, out, douts[0], douts[1], douts[2], douts[3], N, 1.3, 0.2, -0.3, 0.0, 1.0);
  double svals[4] = {0.2, -0.3, 0.0, 1.0};
  for (int k = 0; k < 4; k++) {
    memset(sdout, 0, sizeof sdout);
    double r = __enzyme_fwddiff((void *)layer, enzyme_dup, xs, dirs[k], enzyme_dup, out, sdout, N, 1.3, svals[k]);
    fc_near("layer ret", r4.d[k], r, 1e-13);
    for (int i = 0; i < N; i++) fc_near("layer out", douts[k][i], sdout[i], 1e-13);
  }
  /* and one lane against finite differences */
  double xp[N], xm[N], op[N], om[N], hh = 1e-6;
  for (int i = 0; i < N; i++) { xp[i] = xs[i] + hh * dirs[1][i]; xm[i] = xs[i] - hh * dirs[1][i]; }
  double fd = (layer(xp, op, N, 1.3 - 0.3 * hh) - layer(xm, om, N, 1.3 + 0.3 * hh)) / (2 * hh);
  fc_near("layer fd", r4.d[1], fd, 1e-6);
  for (int i = 0; i < N; i++) fc_near("layer out fd", douts[1][i], (op[i] - om[i]) / (2 * hh), 1e-6);
  /* width 2 with a void function: only shadow outputs */
  double d0[N] = {0}, d1[N] = {0};
  __enzyme_fwddiffv((void *)layer, enzyme_width, 2, enzyme_const, xs, enzyme_dup, out, d0, d1, N, 1.3, 1.0, 2.0);
  double pairs = 0.0;
  for (int i = 0; i < N; i++) pairs += xs[i] * xs[(i + 1) % N];
  for (int i = 0; i < N; i++) {
    fc_near("const x, lane 0", d0[i], tanh(xs[i]) * 2 * 1.3 * pairs, 1e-13);
    fc_near("const x, lane 1", d1[i], 2.0 * d0[i], 1e-13);
  }
  /* globals in vector mode */
  vec2 gs = __enzyme_fwddiff2((void *)stateful, enzyme_width, 2, 0.9, 1.0, -3.0);
  double dstate = 2 * 0.9 * sin(0.9) + 0.81 * cos(0.9) + 1.0;
  fc_near("global lane 0", gs.d[0], dstate, 1e-13);
  fc_near("global lane 1", gs.d[1], -3.0 * dstate, 1e-13);
  /* two rows behind pointers; rows are squared in place, so shadows get the output tangents */
  double a[2][3] = {{0.5, -1.0, 2.0}, {1.5, 0.25, -0.5}}, orig[2][3];
  memcpy(orig, a, sizeof a);
  double s0[2][3] = {{1, 0, 0}, {0, 1, 0}}, s1[2][3] = {{0, 0, 1}, {1, 1, 1}};
  double *rows[2] = {a[0], a[1]}, *sr0[2] = {s0[0], s0[1]}, *sr1[2] = {s1[0], s1[1]};
  vec2 ts = __enzyme_fwddiff2((void *)table_sum, enzyme_width, 2, rows, sr0, sr1, 2, 3);
  double want0 = 0, want1 = 0;
  double d0in[2][3] = {{1, 0, 0}, {0, 1, 0}}, d1in[2][3] = {{0, 0, 1}, {1, 1, 1}};
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++) {
      want0 += 2 * orig[i][j] * d0in[i][j] * (i + j + 1);
      want1 += 2 * orig[i][j] * d1in[i][j] * (i + j + 1);
      fc_near("table row shadow 0", s0[i][j], 2 * orig[i][j] * d0in[i][j], 1e-15);
      fc_near("table row shadow 1", s1[i][j], 2 * orig[i][j] * d1in[i][j], 1e-15);
    }
  fc_near("table lane 0", ts.d[0], want0, 1e-13);
  fc_near("table lane 1", ts.d[1], want1, 1e-13);
  return fc_done();
}
