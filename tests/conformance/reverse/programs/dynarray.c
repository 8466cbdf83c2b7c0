/* A C dynamic array (struct with data/len/cap, growth by realloc in a noinline push),
 * filled and consumed inside the differentiated function; also a matrix struct with a
 * flexible array member. */
#include "hcheck.h"
#include <string.h>
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);
struct dynarr { double *data; size_t len, cap; };
__attribute__((noinline)) static void push(struct dynarr *a, double v) {
  if (a->len == a->cap) { a->cap = a->cap ? 2 * a->cap : 1; a->data = realloc(a->data, a->cap * sizeof(double)); }
  a->data[a->len++] = v;
}
struct mat { int r, c; double v[]; };
static struct mat *mat_new(int r, int c) { struct mat *m = malloc(sizeof *m + sizeof(double) * r * c); m->r = r; m->c = c; return m; }
double f(const double *x, int n) {
  struct dynarr a = {NULL, 0, 0};
  for (int k = 0; k < 3; k++) for (int i = 0; i < n; i++) push(&a, x[i] * (k + 1));
  struct mat *m = mat_new(2, n);
  for (int i = 0; i < n; i++) { m->v[i] = a.data[i] * a.data[n + i]; m->v[n + i] = sin(a.data[2 * n + i]); }
  double s = 0;
  for (int i = 0; i < 2 * n; i++) s += m->v[i] * (i + 1);
  free(m);
  free(a.data);
  return s;
}
int main(void) {
  enum { N = 5 };
  double x[N] = {0.3, -0.55, 0.8, 0.1, -0.9};
  for (int split = 0; split < 2; split++) {
    double d[N] = {0};
    if (split) {
      void *t = __enzyme_augmentfwd((void *)f, enzyme_dup, x, d, enzyme_const, N);
      __enzyme_reverse((void *)f, enzyme_dup, x, d, enzyme_const, N, 1.0, t);
    } else {
      __enzyme_autodiff((void *)f, enzyme_dup, x, d, enzyme_const, N);
    }
    for (int i = 0; i < N; i++) {
      double want = (i + 1) * 4 * x[i] + (N + i + 1) * 3 * cos(3 * x[i]);
      hc_near(split ? "split" : "combined", d[i], want, 1e-12);
    }
  }
  return hc_done();
}
