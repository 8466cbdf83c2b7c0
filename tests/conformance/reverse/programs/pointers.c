/* Pointer games on active data: pointers chosen by a comparison, pointer differences
 * used as indices elsewhere, arrays of views into one array built inside the function,
 * a pointer to the maximum element, a pointer walked to the middle of a struct. */
#include "hcheck.h"
#include <stddef.h>
#include <string.h>
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
enum { N = 6 };
double psel(const double *x, int n) {
  double s = 0;
  for (int i = 0; i + 1 < n; i++) {
    const double *p = x[i] > x[i + 1] ? &x[i] : &x[i + 1];
    s += *p * *p;
  }
  return s;
}
double pdiff(const double *x, int n) {
  const double *best = x;
  for (const double *p = x; p < x + n; p++) if (fabs(*p) > fabs(*best)) best = p;
  ptrdiff_t k = best - x;
  double w[N];
  for (int i = 0; i < n; i++) w[i] = x[i] * x[(i + (int)k) % n];
  return w[0] + w[k] * *best;
}
double views(const double *x, int n) {
  (void)n;
  const double *rows[3] = {x, x + 2, x + 4};
  double s = 0;
  for (int r = 0; r < 3; r++) s += rows[r][0] * rows[r][1] + rows[(r + 1) % 3][1];
  return s;
}
struct rec { int tag; double a, b; };
double fieldptr(const double *x, int n) {
  struct rec r[3];
  for (int i = 0; i < 3; i++) { r[i].tag = i; r[i].a = x[2 * i]; r[i].b = x[2 * i + 1] * 2; }
  double s = 0;
  for (int i = 0; i < 3; i++) { double *pb = &r[i].b; double *pa = pb - 1; s += *pa * *pb; }
  (void)n;
  return s;
}
static void check(const char *name, double (*f)(const double *, int), const double *x, const double *got) {
  for (int i = 0; i < N; i++) {
    double xp[N], xm[N], h = hc_h(x[i]);
    memcpy(xp, x, sizeof xp); memcpy(xm, x, sizeof xm);
    xp[i] += h; xm[i] -= h;
    hc_near(name, got[i], (f(xp, N) - f(xm, N)) / (2 * h), 1e-6);
  }
}
#define CHECK(f) do { double d[N] = {0}; __enzyme_autodiff((void *)f, enzyme_dup, x, d, enzyme_const, N); check(#f, f, x, d); } while (0)
int main(void) {
  double x[N] = {0.3, -0.55, 0.8, 0.1, -0.9, 0.45};
  CHECK(psel); CHECK(pdiff); CHECK(views); CHECK(fieldptr);
  return hc_done();
}
