/* Everyday C in reverse mode: float kernels the vectorizer turns into vector reductions,
 * restrict pointers, 2-D array parameters, double** rows, a struct with pointer members
 * duplicated with a shadow struct, static call counters, assert, printf of active values,
 * integer bit tricks for indexing, alloca, early exit from nested loops. */
#include "hcheck.h"
#include <assert.h>
#include <alloca.h>
#include <string.h>
extern int enzyme_dup, enzyme_const, enzyme_dupnoneed;
double __enzyme_autodiff(void *, ...);
float __enzyme_autodiff_f(void *, ...);
enum { N = 8 };

float fdotself(const float *restrict x, const float *restrict y, int n) {
  float s = 0, t = 0;
  for (int i = 0; i < n; i++) { s += x[i] * y[i]; t += x[i] * x[i] * 0.5f; }
  return s * t;
}
void saxpy(float a, const float *restrict x, float *restrict y, int n) {
  for (int i = 0; i < n; i++) y[i] = a * x[i] + y[i] * y[i];
}
double mat2d(const double A[][N], int rows) {
  double s = 0;
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < N; c++) s += A[r][c] * A[(r + 1) % rows][(c * 3) % N];
  return s;
}
double rows_pp(double **rows, int nr, int nc) {
  double s = 0;
  for (int r = 0; r < nr; r++)
    for (int c = 0; c < nc; c++) s += sin(rows[r][c]) * (r + 1);
  return s;
}
struct mesh { double *coords; double *weights; int n; int flags; };
double mesh_energy(const struct mesh *m) {
  double e = 0;
  for (int i = 0; i + 1 < m->n; i++) {
    double d = m->coords[i + 1] - m->coords[i];
    e += m->weights[i] * d * d;
  }
  return e;
}
static int ncalls;
double counted(const double *x, int n) {
  static int first = 1;
  ncalls++;
  assert(n > 0);
  double s = 0;
  for (int i = 0; i < n; i++) s += x[i] * x[i] * (first ? 1.0 : 1.0);
  first = 0;
  if (n > 100) printf("large input, s=%f\n", s);
  return s;
}
double bits(const double *x, int n) {
  double s = 0;
  for (unsigned i = 0; i < (unsigned)n; i++) {
    unsigned j = (i ^ 5u) & (unsigned)(n - 1);
    int sign = (__builtin_popcount(i) & 1) ? -1 : 1;
    s += sign * x[i] * x[j] + (double)(i << 2) * x[i];
  }
  return s;
}
double with_alloca(const double *x, int n) {
  double *t = alloca(n * sizeof(double));
  for (int i = 0; i < n; i++) t[i] = exp(-x[i] * x[i]);
  double s = 0;
  for (int i = 0; i < n; i++) s += t[i] * t[(i + 1) % n];
  return s;
}
double nested_exit(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      s += x[i] * x[j] * 0.1;
      if (s > 0.35) return s * s;
    }
  return s;
}

typedef double (*fn)(const double *, int);
static void check(const char *name, fn f, const double *got, const double *x, int n) {
  for (int i = 0; i < n; i++) {
    double xp[N], xm[N];
    memcpy(xp, x, sizeof xp); memcpy(xm, x, sizeof xm);
    double h = hc_h(x[i]);
    xp[i] += h; xm[i] -= h;
    char buf[64];
    snprintf(buf, sizeof buf, "%s d[%d]", name, i);
    hc_near(buf, got[i], (f(xp, n) - f(xm, n)) / (2 * h), 1e-6);
  }
}
#define CHECK(f) do { double d[N] = {0}; \
    __enzyme_autodiff((void *)f, enzyme_dup, x, d, enzyme_const, N); check(#f, f, d, x, N); } while (0)

int main(void) {
  double x[N];
  for (int i = 0; i < N; i++) x[i] = 0.4 * cos(2.1 * i) + 0.1;
  {
    enum { F = 37 };
    float xf[F], yf[F], dxf[F] = {0}, dyf[F] = {0};
    for (int i = 0; i < F; i++) { xf[i] = 0.1f * (float)sin(i); yf[i] = 0.2f * (float)cos(i); }
    __enzyme_autodiff_f((void *)fdotself, enzyme_dup, xf, dxf, enzyme_dup, yf, dyf, enzyme_const, F);
    double S = 0, T = 0;
    for (int i = 0; i < F; i++) { S += (double)xf[i] * yf[i]; T += 0.5 * xf[i] * xf[i]; }
    for (int i = 0; i < F; i++) {
      hc_near("fdot dx", dxf[i], yf[i] * T + S * xf[i], 1e-5);
      hc_near("fdot dy", dyf[i], xf[i] * T, 1e-5);
    }
    float y0[F], dys[F], dxs[F] = {0};
    memcpy(y0, yf, sizeof y0);
    for (int i = 0; i < F; i++) dys[i] = 1.0f;
    float da = __enzyme_autodiff_f((void *)saxpy, 1.5f, enzyme_dup, xf, dxs, enzyme_dup, yf, dys, enzyme_const, F);
    double wa = 0;
    for (int i = 0; i < F; i++) {
      wa += xf[i];
      hc_near("saxpy dx", dxs[i], 1.5, 1e-6);
      hc_near("saxpy dy", dys[i], 2 * y0[i], 1e-6);
    }
    hc_near("saxpy da", da, wa, 1e-5);
  }
  {
    double A[3][N], dA[3][N] = {{0}};
    for (int r = 0; r < 3; r++) for (int c = 0; c < N; c++) A[r][c] = sin(r * N + c);
    __enzyme_autodiff((void *)mat2d, enzyme_dup, A, dA, enzyme_const, 3);
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < N; c++) {
        double s = A[r][c], h = hc_h(s);
        A[r][c] = s + h; double fp = mat2d(A, 3); A[r][c] = s - h; double fm = mat2d(A, 3); A[r][c] = s;
        hc_near("mat2d", dA[r][c], (fp - fm) / (2 * h), 1e-6);
      }
    double *rows[3] = {A[0], A[1], A[2]}, *drows[3] = {dA[0], dA[1], dA[2]};
    memset(dA, 0, sizeof dA);
    __enzyme_autodiff((void *)rows_pp, enzyme_dup, rows, drows, enzyme_const, 3, enzyme_const, N);
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < N; c++) hc_near("rows_pp", dA[r][c], cos(A[r][c]) * (r + 1), 1e-12);
  }
  {
    double c[N], w[N], dc[N] = {0}, dw[N] = {0};
    for (int i = 0; i < N; i++) { c[i] = i * 0.3 + 0.1 * sin(i); w[i] = 1.0 + 0.1 * i; }
    struct mesh m = {c, w, N, 7}, dm = {dc, dw, N, 7};
    __enzyme_autodiff((void *)mesh_energy, enzyme_dup, &m, &dm);
    for (int i = 0; i + 1 < N; i++) hc_near("mesh dw", dw[i], (c[i + 1] - c[i]) * (c[i + 1] - c[i]), 1e-12);
    for (int i = 0; i < N; i++) {
      double want = 0;
      if (i > 0) want += 2 * w[i - 1] * (c[i] - c[i - 1]);
      if (i + 1 < N) want -= 2 * w[i] * (c[i + 1] - c[i]);
      hc_near("mesh dc", dc[i], want, 1e-12);
    }
  }
  ncalls = 0;
  CHECK(counted);
  hc_near("counted once + 2N fd", ncalls, 1 + 2 * N, 0);
  CHECK(bits); CHECK(with_alloca); CHECK(nested_exit);
  return hc_done();
}
