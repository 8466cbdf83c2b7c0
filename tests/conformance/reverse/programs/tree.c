/* A binary tree built with malloc and evaluated recursively (an expression tree), plus a
 * recursive struct-returning function. */
#include "hcheck.h"
#include <string.h>
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);
enum { ADD, MUL, SIN, LEAF };
struct node { int op; int idx; struct node *l, *r; };
static struct node *mk(int op, int idx, struct node *l, struct node *r) {
  struct node *n = malloc(sizeof *n); n->op = op; n->idx = idx; n->l = l; n->r = r; return n;
}
static void release(struct node *n) { if (!n) return; release(n->l); release(n->r); free(n); }
static double eval(const struct node *n, const double *x) {
  switch (n->op) {
    case ADD: return eval(n->l, x) + eval(n->r, x);
    case MUL: return eval(n->l, x) * eval(n->r, x);
    case SIN: return sin(eval(n->l, x));
    default: return x[n->idx];
  }
}
static struct node *ROOT;
double expr(const double *x, int n) { (void)n; return eval(ROOT, x); }
typedef struct { double s, p; } sp;
static sp fold(const double *x, int n) {
  if (n == 1) { sp r = {x[0], x[0]}; return r; }
  sp a = fold(x, n / 2), b = fold(x + n / 2, n - n / 2);
  sp r = {a.s + b.s, a.p * b.p};
  return r;
}
double folded(const double *x, int n) { sp r = fold(x, n); return r.s * r.p; }
/* builds the tree itself from the data (sizes depend on n) */
double built(const double *x, int n) {
  struct node *t = mk(LEAF, 0, 0, 0);
  for (int i = 1; i < n; i++) t = mk(i % 2 ? MUL : ADD, 0, mk(SIN, 0, t, 0), mk(LEAF, i, 0, 0));
  double v = eval(t, x);
  release(t);
  return v;
}
static void check(const char *name, double (*f)(const double *, int), const double *x, int n, const double *got) {
  for (int i = 0; i < n; i++) {
    double xp[8], xm[8], h = hc_h(x[i]);
    memcpy(xp, x, sizeof(double) * n); memcpy(xm, x, sizeof(double) * n);
    xp[i] += h; xm[i] -= h;
    hc_near(name, got[i], (f(xp, n) - f(xm, n)) / (2 * h), 1e-6);
  }
}
int main(void) {
  double x[6] = {0.4, -0.3, 0.9, 0.2, 0.7, -0.6};
  /* (x0 * sin(x1 + x2)) + sin(x3 * (x4 + x5)) */
  ROOT = mk(ADD, 0, mk(MUL, 0, mk(LEAF, 0, 0, 0), mk(SIN, 0, mk(ADD, 0, mk(LEAF, 1, 0, 0), mk(LEAF, 2, 0, 0)), 0)),
            mk(SIN, 0, mk(MUL, 0, mk(LEAF, 3, 0, 0), mk(ADD, 0, mk(LEAF, 4, 0, 0), mk(LEAF, 5, 0, 0))), 0));
  double d[6] = {0};
  __enzyme_autodiff((void *)expr, enzyme_dup, x, d, enzyme_const, 6);
  check("expr tree", expr, x, 6, d);
  double d2[6] = {0};
  __enzyme_autodiff((void *)folded, enzyme_dup, x, d2, enzyme_const, 6);
  check("recursive struct fold", folded, x, 6, d2);
  double d3[6] = {0};
  __enzyme_autodiff((void *)built, enzyme_dup, x, d3, enzyme_const, 6);
  check("tree built inside", built, x, 6, d3);
  double d4[6] = {0};
  void *t = __enzyme_augmentfwd((void *)built, enzyme_dup, x, d4, enzyme_const, 6);
  __enzyme_reverse((void *)built, enzyme_dup, x, d4, enzyme_const, 6, 1.0, t);
  check("split tree built inside", built, x, 6, d4);
  double d5[6] = {0};
  void *t5 = __enzyme_augmentfwd((void *)folded, enzyme_dup, x, d5, enzyme_const, 6);
  __enzyme_reverse((void *)folded, enzyme_dup, x, d5, enzyme_const, 6, 1.0, t5);
  check("split recursive fold", folded, x, 6, d5);
  release(ROOT);
  return hc_done();
}
