/* A list built by a helper that stores its pointer argument into a fresh node (the
 * constructor idiom), called once with a literal NULL and then with earlier nodes. */
#include "hcheck.h"
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
struct node { double v; struct node *next; };
static struct node *push(struct node *head, double v) {
  struct node *n = malloc(sizeof *n);
  n->v = v;
  n->next = head;
  return n;
}
double f(const double *x, int n) {
  struct node *h = push(NULL, x[0] * x[0]); /* a literal NULL at this call site */
  for (int i = 1; i < n; i++) h = push(h, x[i] * x[i]);
  double s = 0;
  while (h) { struct node *nx = h->next; s += h->v * h->v; free(h); h = nx; }
  return s;
}
int main(void) {
  double x[3] = {0.5, -1.5, 2.0}, d[3] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, d, enzyme_const, 3);
  for (int i = 0; i < 3; i++) hc_near("d", d[i], 4 * x[i] * x[i] * x[i], 1e-12);
  /* forward mode through the same helper (the literal NULL's tangent is NULL too) */
  for (int i = 0; i < 3; i++) {
    double e[3] = {0};
    e[i] = 1;
    hc_near("fwd", __enzyme_fwddiff((void *)f, enzyme_dup, x, e, enzyme_const, 3), 4 * x[i] * x[i] * x[i], 1e-12);
  }
  return hc_done();
}
