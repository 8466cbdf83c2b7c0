/* Split-mode corners: local arrays passed to callees, heap workspaces freed in the
 * forward piece, dupnoneed outputs, float scalars, a double function whose tape-only
 * augmented call is reversed with a seed, many augment/reverse pairs in a loop, tapes
 * stored in a struct and reversed from another function, memcpy inside. */
#include "hcheck.h"
#include <string.h>
extern int enzyme_dup, enzyme_const, enzyme_out, enzyme_dupnoneed;
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);
double __enzyme_reverse_d(void *, ...);
float __enzyme_reverse_f(void *, ...);
enum { N = 6 };

__attribute__((noinline)) static void smooth(const double *in, double *out, int n) {
  for (int i = 0; i < n; i++) out[i] = 0.25 * in[(i + n - 1) % n] + 0.5 * in[i] + 0.25 * in[(i + 1) % n];
}
/* local arrays handed to a noinline callee */
double local_arrays(const double *x, int n) {
  double a[N], b[N];
  for (int i = 0; i < n; i++) a[i] = x[i] * x[i];
  smooth(a, b, n);
  smooth(b, a, n);
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}
/* heap workspace freed before returning, memcpy of a struct holding doubles */
struct st { double p[N]; double q; };
double heap_ws(const double *x, int n) {
  struct st *w = malloc(sizeof *w), c;
  for (int i = 0; i < n; i++) w->p[i] = sin(x[i]);
  w->q = x[0] * x[1];
  memcpy(&c, w, sizeof c);
  free(w);
  double s = c.q;
  for (int i = 0; i < n; i++) s += c.p[i] * c.p[(i + 2) % n];
  return s;
}
void outonly(const double *x, double *y, int n) {
  for (int i = 0; i < n; i++) y[i] = exp(x[i]) * x[(i + 1) % n];
}
float fscale(float a, const float *x, int n) {
  float s = 0;
  for (int i = 0; i < n; i++) s += a * a * x[i];
  return s;
}
struct pending { void *tape; double *x, *dx; };
static void finish(struct pending *p, double seed) {
  __enzyme_reverse((void *)local_arrays, enzyme_dup, p->x, p->dx, enzyme_const, N, seed, p->tape);
}

static void fd_check(const char *name, double (*f)(const double *, int), const double *x, const double *got, double scale) {
  for (int i = 0; i < N; i++) {
    double xp[N], xm[N], h = hc_h(x[i]);
    memcpy(xp, x, sizeof xp); memcpy(xm, x, sizeof xm);
    xp[i] += h; xm[i] -= h;
    hc_near(name, got[i], scale * (f(xp, N) - f(xm, N)) / (2 * h), 1e-6);
  }
}

int main(void) {
  double x[N] = {0.3, -0.5, 0.8, 0.1, -0.9, 0.45};
  {
    double dx[N] = {0};
    struct pending p = {__enzyme_augmentfwd((void *)local_arrays, enzyme_dup, x, dx, enzyme_const, N), x, dx};
    finish(&p, 2.5);
    fd_check("local arrays", local_arrays, x, dx, 2.5);
  }
  {
    double dx[N] = {0};
    void *t = __enzyme_augmentfwd((void *)heap_ws, enzyme_dup, x, dx, enzyme_const, N);
    __enzyme_reverse((void *)heap_ws, enzyme_dup, x, dx, enzyme_const, N, 1.0, t);
    fd_check("heap workspace", heap_ws, x, dx, 1.0);
  }
  {
    double dx[N] = {0}, y[N], dy[N];
    for (int i = 0; i < N; i++) dy[i] = 0;
    void *t = __enzyme_augmentfwd((void *)outonly, enzyme_dup, x, dx, enzyme_dupnoneed, y, dy, enzyme_const, N);
    for (int i = 0; i < N; i++) dy[i] = 1.0 + i;
    __enzyme_reverse((void *)outonly, enzyme_dup, x, dx, enzyme_dupnoneed, y, dy, enzyme_const, N, t);
    for (int i = 0; i < N; i++) {
      int pr = (i + N - 1) % N;
      double want = (1.0 + i) * exp(x[i]) * x[(i + 1) % N] + (1.0 + pr) * exp(x[pr]);
      hc_near("dupnoneed dx", dx[i], want, 1e-12);
      hc_near("dupnoneed dy consumed", dy[i], 0, 0);
    }
  }
  {
    float xf[N] = {1, 2, 3, 4, 5, 6}, dxf[N] = {0};
    void *t = __enzyme_augmentfwd((void *)fscale, 0.5f, enzyme_dup, xf, dxf, enzyme_const, N);
    float da = __enzyme_reverse_f((void *)fscale, 0.5f, enzyme_dup, xf, dxf, enzyme_const, N, 2.0f, t);
    hc_near("float da", da, 2.0 * 2 * 0.5 * 21, 1e-6);
    for (int i = 0; i < N; i++) hc_near("float dx", dxf[i], 2.0 * 0.25, 1e-7);
  }
  {
    /* many pairs: tapes must be released (this loop would exhaust memory otherwise) */
    double dx[N] = {0};
    for (int r = 0; r < 20000; r++) {
      void *t = __enzyme_augmentfwd((void *)local_arrays, enzyme_dup, x, dx, enzyme_const, N);
      __enzyme_reverse((void *)local_arrays, enzyme_dup, x, dx, enzyme_const, N, 1e-4, t);
    }
    fd_check("20000 pairs", local_arrays, x, dx, 2.0);
  }
  return hc_done();
}
