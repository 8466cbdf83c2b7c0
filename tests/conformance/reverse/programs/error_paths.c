/* Control flow from C error handling: exit()/abort() on bad input, goto cleanup, a VLA in
 * a recursive function, alloca in a loop, a do-while with break inside a switch. */
#include "hcheck.h"
#include <alloca.h>
#include <string.h>
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
enum { N = 6 };
double with_exit(const double *x, int n) {
  if (n <= 0) { fprintf(stderr, "bad n\n"); exit(3); }
  if (n > 1000) abort();
  double s = 0;
  for (int i = 0; i < n; i++) s += x[i] * x[i] * x[i];
  return s;
}
double with_goto(const double *x, int n) {
  double s = 0;
  double *a = malloc(n * sizeof *a), *b = NULL;
  if (!a) goto fail;
  b = malloc(n * sizeof *b);
  if (!b) goto fail;
  for (int i = 0; i < n; i++) { a[i] = sin(x[i]); b[i] = a[i] * x[i]; }
  for (int i = 0; i < n; i++) { if (b[i] > 10) goto fail; s += a[i] * b[(i + 1) % n]; }
  free(a); free(b);
  return s;
fail:
  free(a); free(b);
  return -1;
}
static double rec_vla(const double *x, int n) {
  if (n == 1) return x[0];
  double t[n - 1];
  for (int i = 0; i + 1 < n; i++) t[i] = x[i] * x[i + 1] + 0.1;
  return rec_vla(t, n - 1) + x[n - 1];
}
double vla_rec(const double *x, int n) { return rec_vla(x, n); }
double alloca_loop(const double *x, int n) {
  double s = 0;
  for (int r = 1; r <= 3; r++) {
    double *t = alloca(n * sizeof *t);
    for (int i = 0; i < n; i++) t[i] = x[i] * r;
    for (int i = 0; i < n; i++) s += t[i] * t[(i + r) % n];
  }
  return s;
}
double dowhile_switch(const double *x, int n) {
  double s = 0;
  int i = 0;
  do {
    switch ((int)(fabs(x[i]) * 4)) {
      case 0: s += x[i]; break;
      case 1: s += x[i] * x[i]; break;
      case 2: s -= exp(x[i]); if (s < -100) break; s *= 1.01; break;
      default: s += sqrt(fabs(x[i]));
    }
    if (s > 1e6) break;
  } while (++i < n);
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
  CHECK(with_exit); CHECK(with_goto); CHECK(vla_rec); CHECK(alloca_loop); CHECK(dowhile_switch);
  return hc_done();
}
