/* Variable-length arrays (combined and split) and a heap tree built by a pointer-returning function. */
#include "adcheck.h"
#include <string.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);
__attribute__((noinline)) double vla(const double *x, int n) {
  double t[n];
  for (int i = 0; i < n; i++) t[i] = x[i] * x[(i + 1) % n];
  double s = 0;
  for (int i = 0; i < n; i++) { if (t[i] < 0) continue; s += sqrt(t[i]); }
  return s;
}
struct node { double v; struct node *l, *r; };
__attribute__((noinline)) double tree_sum(struct node *t) { return t ? t->v * t->v + 0.5 * tree_sum(t->l) + tree_sum(t->r) : 0; }
__attribute__((noinline)) struct node *build(const double *x, int lo, int hi) {
  if (lo >= hi) return 0;
  int mid = (lo + hi) / 2;
  struct node *n = malloc(sizeof *n);
  n->v = x[mid]; n->l = build(x, lo, mid); n->r = build(x, mid + 1, hi);
  return n;
}
static void drop(struct node *t) { if (t) { drop(t->l); drop(t->r); free(t); } }
__attribute__((noinline)) double via_tree(const double *x, int n) {
  struct node *t = build(x, 0, n);
  double s = tree_sum(t);
  drop(t);
  return s;
}
static double vla_f(const double *x, int n) { return vla(x, n); }
static double tree_f(const double *x, int n) { return via_tree(x, n); }
static void fd(double (*f)(const double *, int), double *x, int n, double *g) {
  for (int i = 0; i < n; i++) { double s = x[i], h = 1e-6; x[i] = s + h; double a = f(x, n); x[i] = s - h; double b = f(x, n); x[i] = s; g[i] = (a - b) / (2 * h); }
}
int main(void) {
  double x[5] = {0.5, 1.5, -0.25, 2.0, 0.75}, dx[5] = {0}, g[5];
  __enzyme_autodiff((void *)vla, x, dx, 5);
  fd(vla_f, x, 5, g);
  for (int i = 0; i < 5; i++) ac_near("vla", dx[i], g[i], 1e-6);
  double dx2[5] = {0};
  void *tp = __enzyme_augmentfwd((void *)vla, x, dx2, 5);
  __enzyme_reverse((void *)vla, x, dx2, 5, 1.0, tp);
  for (int i = 0; i < 5; i++) ac_near("vla split", dx2[i], g[i], 1e-6);
  double dx3[5] = {0};
  __enzyme_autodiff((void *)via_tree, x, dx3, 5);
  fd(tree_f, x, 5, g);
  for (int i = 0; i < 5; i++) ac_near("tree", dx3[i], g[i], 1e-6);
  return ac_done();
}
