/* Memory: loads/stores/GEPs, allocas, malloc/calloc/free, pointer-to-pointer structures with
 * shadow pointer tables, structs mixing ints/pointers/doubles, constant tables, in-place
 * overwrites, memcpy of doubles. */
#include "adcheck.h"
extern int enzyme_dup, enzyme_const, enzyme_out, enzyme_dupnoneed;
double __enzyme_autodiff(void *, ...);
void __enzyme_autodiff_v(void *, ...);

static const double table[5] = {0.5, -1.25, 2.0, 0.75, 3.5};

/* constant global table (inactive) mixed with active data; local array in the middle */
__attribute__((noinline)) double weighted(const double *x, int n) {
  double tmp[8];
  for (int i = 0; i < n; i++) tmp[i] = x[i] * table[i % 5];
  double s = 0;
  for (int i = n - 1; i >= 0; i--) s += tmp[i] * tmp[(i + 1) % n];
  return s;
}

/* heap scratch buffers: malloc + calloc + free */
__attribute__((noinline)) double heap(const double *x, int n) {
  double *a = malloc(n * sizeof(double));
  double *b = calloc(n, sizeof(double));
  for (int i = 0; i < n; i++) a[i] = exp(x[i] * 0.3);
  for (int i = 0; i < n; i++) b[i] = a[i] * a[(i + 2) % n];
  double s = 0;
  for (int i = 0; i < n; i++) s += b[i];
  free(a);
  free(b);
  return s;
}

/* in-place overwrite: x is both input and output */
__attribute__((noinline)) void smooth(double *x, int n) {
  for (int it = 0; it < 3; it++)
    for (int i = 1; i < n; i++) x[i] = 0.5 * (x[i] + x[i - 1] * x[i - 1]);
}

/* pointer-to-pointer: rows reached through a table of row pointers */
__attribute__((noinline)) double rows_sum(double **rows, int r, int c) {
  double s = 0;
  for (int i = 0; i < r; i++)
    for (int j = 0; j < c; j++) s += rows[i][j] * rows[i][j] * (i + 1);
  return s;
}

struct particle { int id; double *pos; double mass; struct particle *next; };

/* linked structure mixing ints, pointers and doubles */
__attribute__((noinline)) double energy(struct particle *p) {
  double e = 0;
  for (; p; p = p->next) e += 0.5 * p->mass * (p->pos[0] * p->pos[0] + p->pos[1] * p->pos[1]) + p->id;
  return e;
}

/* memcpy of doubles into a local buffer, then use */
__attribute__((noinline)) double copied(const double *x, int n) {
  double buf[16];
  memcpy(buf, x, n * sizeof(double));
  double s = 0;
  for (int i = 0; i < n; i++) s += sin(buf[i]) * buf[(i + 1) % n];
  return s;
}

/* output through a pointer, with a scalar active input: dupnoneed output */
__attribute__((noinline)) void scale_into(double *out, double a, int n) {
  for (int i = 0; i < n; i++) out[i] = a * (i + 1) * a;
}

enum { N = 6 };
static double heap_f(const double *x, int n) { return heap(x, n); }
static double smooth_f(const double *x, int n) {
  double y[N]; memcpy(y, x, sizeof y); smooth(y, n);
  double s = 0; for (int i = 0; i < n; i++) s += y[i] * (i + 1); return s;
}
static double copied_f(const double *x, int n) { return copied(x, n); }

int main(void) {
  double x[N], dx[N], fd[N];
  for (int i = 0; i < N; i++) x[i] = 0.3 + 0.17 * i;

  memset(dx, 0, sizeof dx);
  __enzyme_autodiff((void *)weighted, x, dx, N);
  ac_fd_grad(weighted, x, N, fd);
  for (int i = 0; i < N; i++) ac_near("weighted", dx[i], fd[i], 1e-6);

  memset(dx, 0, sizeof dx);
  __enzyme_autodiff((void *)heap, enzyme_dup, x, dx, enzyme_const, N);
  ac_fd_grad(heap_f, x, N, fd);
  for (int i = 0; i < N; i++) ac_near("heap", dx[i], fd[i], 1e-6);

  /* shadows accumulate (+=): run twice, expect twice the gradient */
  memset(dx, 0, sizeof dx);
  __enzyme_autodiff((void *)copied, x, dx, N);
  __enzyme_autodiff((void *)copied, x, dx, N);
  ac_fd_grad(copied_f, x, N, fd);
  for (int i = 0; i < N; i++) ac_near("copied x2", dx[i], 2 * fd[i], 1e-6);

  /* in place: seed the output adjoint in the shadow, read the input adjoint back */
  double y[N], dy[N];
  for (int i = 0; i < N; i++) { y[i] = x[i]; dy[i] = i + 1; }
  __enzyme_autodiff((void *)smooth, enzyme_dup, y, dy, enzyme_const, N);
  ac_fd_grad(smooth_f, x, N, fd);
  for (int i = 0; i < N; i++) ac_near("smooth in place", dy[i], fd[i], 1e-6);

  double r0[3] = {1, 2, 3}, r1[3] = {-1, 0.5, 4}, d0[3] = {0}, d1[3] = {0};
  double *rows[2] = {r0, r1}, *drows[2] = {d0, d1};
  __enzyme_autodiff((void *)rows_sum, enzyme_dup, rows, drows, enzyme_const, 2, enzyme_const, 3);
  for (int j = 0; j < 3; j++) { ac_near("rows0", d0[j], 2 * r0[j], 1e-12); ac_near("rows1", d1[j], 4 * r1[j], 1e-12); }

  double pa[2] = {1.0, 2.0}, pb[2] = {-0.5, 0.25}, dpa[2] = {0}, dpb[2] = {0};
  struct particle b = {2, pb, 3.0, 0}, a = {1, pa, 2.0, &b};
  struct particle db = {0, dpb, 0.0, 0}, da = {0, dpa, 0.0, &db};
  __enzyme_autodiff((void *)energy, &a, &da);
  ac_near("energy dpa0", dpa[0], 2.0 * 1.0, 1e-12);
  ac_near("energy dpb1", dpb[1], 3.0 * 0.25, 1e-12);
  ac_near("energy dmass a", da.mass, 0.5 * 5.0, 1e-12);
  ac_near("energy dmass b", db.mass, 0.5 * (0.25 + 0.0625), 1e-12);

  double out[4], dout[4] = {1, 1, 1, 1};
  double ga = __enzyme_autodiff((void *)scale_into, enzyme_dupnoneed, out, dout, 1.5, enzyme_const, 4);
  ac_near("dupnoneed", ga, 2 * 1.5 * (1 + 2 + 3 + 4), 1e-12);
  for (int i = 0; i < 4; i++) ac_near("output shadow consumed", dout[i], 0.0, 0.0);
  return ac_done();
}
