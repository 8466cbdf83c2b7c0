/* Forward mode through memory: dup arrays whose shadows receive tangents, local arrays,
 * malloc/calloc/realloc/free temporaries, pointer-to-pointer structures, memcpy/memmove/
 * memset, a written global, enzyme_dupnoneed. Each is checked against finite differences
 * of the primal along the same direction. */
#include "fwdcheck.h"
double __enzyme_fwddiff(void *, ...);
void __enzyme_fwddiffv(void *, ...);
#define N 6

/* out[i] = x[i]^2 * sum(x); returns sum(out) */
__attribute__((noinline)) double square_scale(const double *x, double *out, int n) {
  double s = 0.0, r = 0.0;
  for (int i = 0; i < n; i++) s += x[i];
  for (int i = 0; i < n; i++) { out[i] = x[i] * x[i] * s; r += out[i]; }
  return r;
}
/* a malloc'd temporary, copied with memcpy, grown with realloc, then freed */
__attribute__((noinline)) double with_heap(const double *x, int n) {
  double *t = malloc(n * sizeof(double));
  for (int i = 0; i < n; i++) t[i] = exp(x[i] * 0.3);
  double *c = malloc(n * sizeof(double));
  memcpy(c, t, n * sizeof(double));
  c = realloc(c, 2 * n * sizeof(double));
  memmove(c + n, c, n * sizeof(double));
  double *z = calloc(n, sizeof(double));
  for (int i = 0; i < n; i++) z[i] += c[i] * c[n + n - 1 - i];
  double r = 0.0;
  for (int i = 0; i < n; i++) r += z[i] * x[i];
  free(t); free(c); free(z);
  return r;
}
/* a local array (alloca) and memset */
__attribute__((noinline)) double local_array(const double *x, int n) {
  double buf[16];
  memset(buf, 0, sizeof buf);
  for (int i = 0; i < n; i++) buf[i % 4] += x[i] * x[(i + 1) % n];
  return buf[0] * buf[1] + buf[2] / (1.0 + buf[3] * buf[3]);
}
/* pointer-to-pointer: rows of a matrix behind a table of row pointers */
typedef struct { int rows, cols; double **row; } Mat;
__attribute__((noinline)) double mat_energy(const Mat *m) {
  double e = 0.0;
  for (int i = 0; i < m->rows; i++)
    for (int j = 0; j < m->cols; j++) e += sin(m->row[i][j]) * m->row[i][(j + 1) % m->cols];
  return e;
}
/* builds a linked structure of heap nodes holding values, then reduces it */
typedef struct Node { double v; struct Node *next; } Node;
__attribute__((noinline)) double list_sum(const double *x, int n) {
  Node *head = NULL;
  for (int i = 0; i < n; i++) {
    Node *nd = malloc(sizeof(Node));
    nd->v = x[i] * x[i];
    nd->next = head;
    head = nd;
  }
  double s = 0.0;
  while (head) { Node *nx = head->next; s += head->v * (s + 1.0); free(head); head = nx; }
  return s;
}
/* writes a global accumulator, then reads it back */
double g_acc;
__attribute__((noinline)) double via_global(double x) {
  g_acc = x * x;
  g_acc += sin(x);
  return g_acc * 2.0;
}
/* void function: only shadow outputs */
__attribute__((noinline)) void axpy(double a, const double *x, double *y, int n) {
  for (int i = 0; i < n; i++) y[i] = a * x[i] + y[i];
}

/* a non-inlined accessor returning a pointer into shadowed memory: its shadow comes back too */
__attribute__((noinline)) double *row_of(const Mat *m, int i) { return m->row[i]; }
__attribute__((noinline)) double via_accessor(const Mat *m) {
  double s = 0.0;
  for (int i = 0; i < m->rows; i++) {
    double *r = row_of(m, i);
    r[0] = r[0] * r[1];                  /* written through the returned pointer */
    s += r[0] * r[m->cols - 1];
  }
  return s;
}

/* structs passed and returned by value in memory (byval / sret): the callee writes its copy */
typedef struct { double x, y, z, w; } V4;
__attribute__((noinline)) V4 scale4(V4 a, double s) { a.x *= s; a.y *= s; a.z *= s; a.w = sin(a.w) * s; return a; }
__attribute__((noinline)) double dot4(V4 a, V4 b) { return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w; }
__attribute__((noinline)) double by_value(double t) {
  V4 a = {t, 2 * t, t * t, 1.0 / t};
  V4 b = scale4(a, t);
  return dot4(a, b) + a.x;   /* a is unchanged by scale4 */
}

static double x0[N] = {0.3, -0.7, 1.1, 0.45, -1.3, 0.9};
static double vdir[N] = {0.2, 1.0, -0.5, 0.3, 0.8, -1.2};
static void along(double *out, double h) { for (int i = 0; i < N; i++) out[i] = x0[i] + h * vdir[i]; }
#define H 1e-6

int main(void) {
  double x[N], dx[N], out[N], dout[N], xp[N], xm[N], op[N], om[N];
  memcpy(x, x0, sizeof x); memcpy(dx, vdir, sizeof dx);
  along(xp, H); along(xm, -H);
  /* dup input and dup output: shadow of out receives the output tangents */
  memset(dout, 0, sizeof dout);
  double dr = __enzyme_fwddiff((void *)square_scale, enzyme_dup, x, dx, enzyme_dup, out, dout, N);
  double rp = square_scale(xp, op, N), rm = square_scale(xm, om, N);
  fc_near("square_scale ret", dr, (rp - rm) / (2 * H), 1e-6);
  for (int i = 0; i < N; i++) fc_near("square_scale out", dout[i], (op[i] - om[i]) / (2 * H), 1e-6);
  /* the primal output is computed too */
  square_scale(x, op, N);
  for (int i = 0; i < N; i++) fc_near("square_scale primal", out[i], op[i], 0.0);
  /* dupnoneed output */
  memset(dout, 0, sizeof dout);
  __enzyme_fwddiff((void *)square_scale, enzyme_dup, x, dx, enzyme_dupnoneed, out, dout, N);
  for (int i = 0; i < N; i++) fc_near("dupnoneed out", dout[i], (op[i] - om[i]) / (2 * H) * 0 + (
      square_scale(xp, op, N), square_scale(xm, om, N), (op[i] - om[i]) / (2 * H)), 1e-6);
  fc_near("with_heap", __enzyme_fwddiff((void *)with_heap, x, dx, N),
          (with_heap(xp, N) - with_heap(xm, N)) / (2 * H), 1e-6);
  fc_near("local_array", __enzyme_fwddiff((void *)local_array, x, dx, N),
          (local_array(xp, N) - local_array(xm, N)) / (2 * H), 1e-6);
  fc_near("list_sum", __enzyme_fwddiff((void *)list_sum, x, dx, N),
          (list_sum(xp, N) - list_sum(xm, N)) / (2 * H), 1e-6);
  /* 2x3 matrix behind row pointers, with a shadow matrix of the same shape */
  double *rows[2] = {x, x + 3}, *drows[2] = {dx, dx + 3};
  Mat m = {2, 3, rows}, dm = {2, 3, drows};
  double *rp2[2] = {xp, xp + 3}, *rm2[2] = {xm, xm + 3};
  Mat mp = {2, 3, rp2}, mm = {2, 3, rm2};
  fc_near("mat_energy", __enzyme_fwddiff((void *)mat_energy, &m, &dm),
          (mat_energy(&mp) - mat_energy(&mm)) / (2 * H), 1e-6);
  {
    double a[N], da[N], ap[N], am[N];
    memcpy(a, x0, sizeof a); memcpy(da, vdir, sizeof da);
    along(ap, H); along(am, -H);
    double *ra[2] = {a, a + 3}, *rda[2] = {da, da + 3}, *rap[2] = {ap, ap + 3}, *ram[2] = {am, am + 3};
    Mat ma = {2, 3, ra}, mda = {2, 3, rda}, map = {2, 3, rap}, mam = {2, 3, ram};
    double got = __enzyme_fwddiff((void *)via_accessor, &ma, &mda);
    fc_near("via_accessor", got, (via_accessor(&map) - via_accessor(&mam)) / (2 * H), 1e-6);
    fc_near("via_accessor shadow", da[0], (ap[0] - am[0]) / (2 * H), 1e-6);
  }
  fc_near("by_value", __enzyme_fwddiff((void *)by_value, 0.7, 1.0), FC_FD(by_value, 0.7), 1e-6);
  fc_near("via_global", __enzyme_fwddiff((void *)via_global, 0.8, 1.0), 2.0 * (1.6 + cos(0.8)), 1e-12);
  fc_near("via_global primal", g_acc, 0.64 + sin(0.8), 1e-15);
  /* void function: y' = a' x + a x' + y' */
  double y[N], dy[N];
  for (int i = 0; i < N; i++) { y[i] = i; dy[i] = 0.5 * i; }
  __enzyme_fwddiffv((void *)axpy, 2.0, 0.25, x, dx, y, dy, N);
  for (int i = 0; i < N; i++) {
    fc_near("axpy y", y[i], 2.0 * x[i] + i, 1e-15);
    fc_near("axpy dy", dy[i], 0.25 * x[i] + 2.0 * dx[i] + 0.5 * i, 1e-15);
  }
  return fc_done();
}
