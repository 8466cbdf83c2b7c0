/* Truly indirect calls: a const table of callbacks indexed at run time and a struct
 * holding a function pointer chosen by the caller. */
#include "hcheck.h"
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
typedef double (*unary)(double);
static double sq(double x) { return x * x; }
static double cube(double x) { return x * x * x; }
static const unary table[2] = {sq, cube};
struct model { unary f; double scale; };
double apply(const double *x, int n, int which) {
  double s = 0;
  for (int i = 0; i < n; i++) s += table[(i + which) % 2](x[i]);
  return s;
}
double apply_struct(const struct model *m, const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += m->f(x[i]) * m->scale;
  return s;
}
int main(void) {
  double x[4] = {0.5, -1.5, 2.0, 0.25}, d[4] = {0};
  __enzyme_autodiff((void *)apply, enzyme_dup, x, d, enzyme_const, 4, enzyme_const, 1);
  for (int i = 0; i < 4; i++) hc_near("table", d[i], (i + 1) % 2 ? 3 * x[i] * x[i] : 2 * x[i], 1e-12);
  struct model m = {cube, 2.0};
  double d2[4] = {0};
  __enzyme_autodiff((void *)apply_struct, enzyme_const, &m, enzyme_dup, x, d2, enzyme_const, 4);
  for (int i = 0; i < 4; i++) hc_near("struct fnptr", d2[i], 6 * x[i] * x[i], 1e-12);
  return hc_done();
}
