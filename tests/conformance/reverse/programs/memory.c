/* Memory shapes in reverse mode: heap workspaces (malloc/calloc/realloc/free), pointer to
 * pointer, arrays of structs, structs of arrays, a linked list, in-place overwrite,
 * memcpy/memmove/memset of structs, 2-D arrays, VLAs, globals, static locals. */
#include "hcheck.h"
#include <string.h>
extern int enzyme_dup, enzyme_const, enzyme_dupnoneed;
double __enzyme_autodiff(void *, ...);
enum { N = 8 };

double m_malloc(const double *x, int n) {
  double *w = malloc(n * sizeof *w);
  for (int i = 0; i < n; i++) w[i] = x[i] * x[i];
  double s = 0;
  for (int i = 0; i < n; i++) s += w[i] * w[(i + 1) % n];
  free(w);
  return s;
}
double m_calloc(const double *x, int n) {
  double *acc = calloc(n, sizeof *acc);
  for (int r = 0; r < 3; r++)
    for (int i = 0; i < n; i++) acc[i] += sin(x[i] * (r + 1));
  double s = 0;
  for (int i = 0; i < n; i++) s += acc[i] * acc[i];
  free(acc);
  return s;
}
double m_realloc(const double *x, int n) {
  int cap = 2, len = 0;
  double *buf = malloc(cap * sizeof *buf);
  for (int i = 0; i < n; i++) {
    if (len == cap) { cap *= 2; buf = realloc(buf, cap * sizeof *buf); }
    buf[len++] = exp(0.3 * x[i]);
  }
  double s = 0;
  for (int i = 0; i < len; i++) s += buf[i] * (i + 1);
  free(buf);
  return s;
}
double m_ptrptr(const double *x, int n) {
  double **rows = malloc(2 * sizeof *rows);
  for (int r = 0; r < 2; r++) {
    rows[r] = malloc(n * sizeof **rows);
    for (int i = 0; i < n; i++) rows[r][i] = x[i] * (r + 1) + x[(i + r) % n];
  }
  double s = 0;
  for (int i = 0; i < n; i++) s += rows[0][i] * rows[1][i];
  for (int r = 0; r < 2; r++) free(rows[r]);
  free(rows);
  return s;
}
struct particle { double pos[3]; double mass; int id; };
double m_aos(const double *x, int n) {
  struct particle p[N];
  for (int i = 0; i < n; i++) {
    p[i].id = i;
    p[i].mass = 1.0 + 0.1 * i;
    for (int k = 0; k < 3; k++) p[i].pos[k] = x[i] * (k + 1) - x[(i + k) % n];
  }
  double e = 0;
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++) {
      double d2 = 0.1;
      for (int k = 0; k < 3; k++) { double d = p[i].pos[k] - p[j].pos[k]; d2 += d * d; }
      e += p[i].mass * p[j].mass / sqrt(d2);
    }
  return e;
}
struct soa { double *u, *v; int n; };
static double soa_energy(const struct soa *s) {
  double e = 0;
  for (int i = 0; i < s->n; i++) e += s->u[i] * s->u[i] + s->u[i] * s->v[i];
  return e;
}
double m_soa(const double *x, int n) {
  struct soa s = {malloc(n * sizeof(double)), malloc(n * sizeof(double)), n};
  for (int i = 0; i < n; i++) { s.u[i] = cos(x[i]); s.v[i] = x[(i + 3) % n]; }
  double e = soa_energy(&s);
  free(s.u); free(s.v);
  return e;
}
struct node { double val; struct node *next; };
double m_list(const double *x, int n) {
  struct node *head = NULL;
  for (int i = 0; i < n; i++) {
    struct node *nd = malloc(sizeof *nd);
    nd->val = x[i] * x[i] + 1;
    nd->next = head;
    head = nd;
  }
  double s = 0, w = 1;
  for (struct node *p = head; p; p = p->next) { s += w * log(p->val); w += 0.5; }
  while (head) { struct node *nx = head->next; free(head); head = nx; }
  return s;
}
double m_inplace(const double *x, int n) {
  double w[N];
  for (int i = 0; i < n; i++) w[i] = x[i];
  for (int it = 0; it < 4; it++)
    for (int i = 0; i < n; i++) w[i] = sin(w[i]) + 0.5 * w[i] * w[(i + 1) % n];
  double s = 0;
  for (int i = 0; i < n; i++) s += w[i];
  return s;
}
struct state { double a, b; double v[4]; };
double m_memcpy(const double *x, int n) {
  (void)n;
  struct state s0 = {x[0], x[1], {x[2], x[3], x[4], x[5]}}, s1, s2;
  memcpy(&s1, &s0, sizeof s1);
  s1.a *= s1.b;
  memmove(&s1.v[1], &s1.v[0], 3 * sizeof(double));
  s1.v[0] = x[6];
  s2 = s1; /* struct assignment */
  memset(&s1, 0, sizeof s1);
  s1.a = 2;
  return s2.a * s2.v[0] + s2.v[1] * s2.v[3] + s1.a * s2.v[2] + s0.v[3] * x[7];
}
double m_2d(const double *x, int n) {
  double A[4][N];
  for (int r = 0; r < 4; r++)
    for (int c = 0; c < n; c++) A[r][c] = x[c] * (r + 1) + r;
  double s = 0;
  for (int r = 1; r < 4; r++)
    for (int c = 0; c < n; c++) s += A[r][c] * A[r - 1][(c + 1) % n];
  return s;
}
double m_vla(const double *x, int n) {
  double t[n], u[2][n];
  for (int i = 0; i < n; i++) { t[i] = x[i] * x[i]; u[0][i] = t[i] + 1; u[1][i] = t[i] * x[i]; }
  double s = 0;
  for (int i = 0; i < n; i++) s += u[0][i] * u[1][(i + 2) % n];
  return s;
}
double g_acc; /* a global accumulator the function writes */
double m_global(const double *x, int n) {
  g_acc = 0;
  for (int i = 0; i < n; i++) g_acc += x[i] * x[i] * x[i];
  return g_acc * 2;
}
double m_static_local(const double *x, int n) {
  static double scratch[N];
  for (int i = 0; i < n; i++) scratch[i] = tanh(x[i]);
  double s = 0;
  for (int i = 0; i < n; i++) s += scratch[i] * scratch[n - 1 - i];
  return s;
}
double m_union(const double *x, int n) {
  /* a union used to reinterpret integer bits only: the double member stays differentiable */
  union { double d; unsigned long long u; } v;
  double s = 0;
  for (int i = 0; i < n; i++) { v.d = x[i]; int neg = (int)(v.u >> 63); s += neg ? -x[i] * 2 : x[i] * x[i]; }
  return s;
}

typedef double (*fn)(const double *, int);
static void check(const char *name, fn f, double got[N], const double *x) {
  for (int i = 0; i < N; i++) {
    double xp[N], xm[N];
    for (int k = 0; k < N; k++) xp[k] = xm[k] = x[k];
    double h = hc_h(x[i]);
    xp[i] += h; xm[i] -= h;
    char buf[64];
    snprintf(buf, sizeof buf, "%s d[%d]", name, i);
    hc_near(buf, got[i], (f(xp, N) - f(xm, N)) / (2 * h), 1e-6);
  }
}
#define CHECK(f) do { double d[N] = {0}; \
    __enzyme_autodiff((void *)f, enzyme_dup, x, d, enzyme_const, N); check(#f, f, d, x); } while (0)

/* an output through memory: y = A x written into a caller buffer; dy consumed */
void matvec(const double *A, const double *x, double *y, int n) {
  for (int i = 0; i < n; i++) { double s = 0; for (int j = 0; j < n; j++) s += A[i * n + j] * x[j]; y[i] = s; }
}

int main(void) {
  double x[N];
  for (int i = 0; i < N; i++) x[i] = 0.7 * cos(0.9 * i + 0.2) + 0.05 * i;
  CHECK(m_malloc); CHECK(m_calloc); CHECK(m_realloc); CHECK(m_ptrptr); CHECK(m_aos);
  CHECK(m_soa); CHECK(m_list); CHECK(m_inplace); CHECK(m_memcpy); CHECK(m_2d); CHECK(m_vla);
  CHECK(m_global); CHECK(m_static_local); CHECK(m_union);
  {
    double A[N * N], dA[N * N] = {0}, dx[N] = {0}, y[N], dy[N];
    for (int i = 0; i < N * N; i++) A[i] = sin(0.1 * i);
    for (int i = 0; i < N; i++) dy[i] = 1.0 + i;
    __enzyme_autodiff((void *)matvec, enzyme_dup, A, dA, enzyme_dup, x, dx, enzyme_dupnoneed, y, dy, enzyme_const, N);
    for (int j = 0; j < N; j++) {
      double want = 0;
      for (int i = 0; i < N; i++) want += (1.0 + i) * A[i * N + j];
      hc_near("matvec dx", dx[j], want, 1e-12);
    }
    for (int i = 0; i < N; i++)
      for (int j = 0; j < N; j++) hc_near("matvec dA", dA[i * N + j], (1.0 + i) * x[j], 1e-12);
    for (int i = 0; i < N; i++) hc_near("dy consumed", dy[i], 0.0, 0.0);
  }
  return hc_done();
}
