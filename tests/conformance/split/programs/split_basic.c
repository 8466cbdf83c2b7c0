/* Split reverse mode as a framework uses it: forward now, seed later, reverse after other
 * work (other AD calls, other tapes alive), caller-owned tapes, struct {tape, primal}
 * returns, active scalars returned by the reverse call, side effects exactly once. */
#include "hcheck.h"
#include <string.h>
extern int enzyme_dup, enzyme_const, enzyme_out, enzyme_dupnoneed, enzyme_allocated, enzyme_tape;
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);
double __enzyme_reverse_d(void *, ...);
double __enzyme_autodiff(void *, ...);
long __enzyme_augmentsize(void *, ...);
typedef struct { void *tape; double primal; } aug_d;
aug_d __enzyme_augmentfwd_ret(void *, ...);
typedef struct { double a, b; } d2;
d2 __enzyme_reverse_d2(void *, ...);
enum { N = 6, H = 4 };

static int fwd_runs;

/* a dense layer: out = tanh(W x + b), with the weights active too */
void dense(const double *W, const double *b, const double *x, double *out, int n, int m) {
  for (int i = 0; i < m; i++) {
    double s = b[i];
    for (int j = 0; j < n; j++) s += W[i * n + j] * x[j];
    out[i] = tanh(s);
  }
  fwd_runs++;
}
/* loss with a heap workspace freed before returning and a data-dependent loop */
double loss(const double *y, const double *target, int m) {
  double *r = malloc(m * sizeof *r);
  for (int i = 0; i < m; i++) r[i] = y[i] - target[i];
  double s = 0;
  int k = 0;
  while (k < m) { s += r[k] * r[k] * (1 + 0.1 * k); k++; }
  free(r);
  return 0.5 * s;
}
/* active scalar arguments and a returned double */
double scaled(double a, const double *x, int n, double b) {
  double s = 0;
  for (int i = 0; i < n; i++) s += exp(a * x[i]) * b;
  return s * a;
}
/* in-place update: the tape must hold what the overwrite destroys */
void relax(double *u, int n, int sweeps) {
  for (int s = 0; s < sweeps; s++)
    for (int i = 1; i + 1 < n; i++) u[i] = 0.5 * u[i] + 0.25 * sin(u[i - 1] + u[i + 1]);
}

static double net_loss(const double *W, const double *b, const double *x, const double *t) {
  double out[H];
  dense(W, b, x, out, N, H);
  return loss(out, t, H);
}

int main(void) {
  double W[H * N], b[H], x[N], t[H];
  for (int i = 0; i < H * N; i++) W[i] = 0.3 * sin(0.7 * i);
  for (int i = 0; i < H; i++) { b[i] = 0.1 * i - 0.2; t[i] = 0.25 * i; }
  for (int j = 0; j < N; j++) x[j] = cos(0.5 * j);

  /* 1. forward through two pieces, seed of the second comes from the first's reverse */
  double dW[H * N] = {0}, db[H] = {0}, dx[N] = {0}, out[H], dout[H] = {0}, dt[H] = {0};
  fwd_runs = 0;
  void *t1 = __enzyme_augmentfwd((void *)dense, enzyme_dup, W, dW, enzyme_dup, b, db, enzyme_dup, x, dx,
                                 enzyme_dup, out, dout, enzyme_const, N, enzyme_const, H);
  double ref[H];
  memcpy(ref, out, sizeof ref);
  /* other AD work while the tape is alive */
  double tmp[N], dtmp[N] = {0};
  for (int j = 0; j < N; j++) tmp[j] = x[j] * 2;
  __enzyme_autodiff((void *)scaled, 0.3, enzyme_dup, tmp, dtmp, enzyme_const, N, 1.5);
  aug_d a2 = __enzyme_augmentfwd_ret((void *)loss, enzyme_dup, out, dout, enzyme_const, t, enzyme_const, H);
  hc_near("loss primal from augmented pass", a2.primal, loss(ref, t, H), 1e-15);
  __enzyme_reverse((void *)loss, enzyme_dup, out, dout, enzyme_const, t, enzyme_const, H, 1.0, a2.tape);
  __enzyme_reverse((void *)dense, enzyme_dup, W, dW, enzyme_dup, b, db, enzyme_dup, x, dx,
                   enzyme_dup, out, dout, enzyme_const, N, enzyme_const, H, t1);
  hc_near("dense ran once", fwd_runs, 1, 0);
  (void)dt;
  for (int i = 0; i < H; i++) hc_near("dout consumed", dout[i], 0, 0);
  for (int k = 0; k < H * N; k++) {
    double h = hc_h(W[k]), s = W[k];
    W[k] = s + h; double fp = net_loss(W, b, x, t);
    W[k] = s - h; double fm = net_loss(W, b, x, t);
    W[k] = s;
    hc_near("dW", dW[k], (fp - fm) / (2 * h), 1e-6);
  }
  for (int k = 0; k < H; k++) {
    double h = hc_h(b[k]), s = b[k];
    b[k] = s + h; double fp = net_loss(W, b, x, t);
    b[k] = s - h; double fm = net_loss(W, b, x, t);
    b[k] = s;
    hc_near("db", db[k], (fp - fm) / (2 * h), 1e-6);
  }
  for (int k = 0; k < N; k++) {
    double h = hc_h(x[k]), s = x[k];
    x[k] = s + h; double fp = net_loss(W, b, x, t);
    x[k] = s - h; double fm = net_loss(W, b, x, t);
    x[k] = s;
    hc_near("dx", dx[k], (fp - fm) / (2 * h), 1e-6);
  }

  /* 2. two interleaved tapes of the same function, reversed in creation order, seeds differ */
  {
    double xa[N], xb[N], dxa[N] = {0}, dxb[N] = {0};
    for (int j = 0; j < N; j++) { xa[j] = 0.1 * j; xb[j] = -0.2 * j + 0.5; }
    void *ta = __enzyme_augmentfwd((void *)scaled, enzyme_const, 0.4, enzyme_dup, xa, dxa, enzyme_const, N, enzyme_const, 2.0);
    void *tb = __enzyme_augmentfwd((void *)scaled, enzyme_const, 0.9, enzyme_dup, xb, dxb, enzyme_const, N, enzyme_const, 1.0);
    __enzyme_reverse((void *)scaled, enzyme_const, 0.4, enzyme_dup, xa, dxa, enzyme_const, N, enzyme_const, 2.0, 3.0, ta);
    __enzyme_reverse((void *)scaled, enzyme_const, 0.9, enzyme_dup, xb, dxb, enzyme_const, N, enzyme_const, 1.0, -1.0, tb);
    for (int j = 0; j < N; j++) {
      hc_near("tape a", dxa[j], 3.0 * 0.4 * 0.4 * 2.0 * exp(0.4 * xa[j]), 1e-12);
      hc_near("tape b", dxb[j], -1.0 * 0.9 * 0.9 * 1.0 * exp(0.9 * xb[j]), 1e-12);
    }
  }
  /* 3. active scalars: the reverse call returns their adjoints as a struct */
  {
    double xs[N], dxs[N] = {0};
    for (int j = 0; j < N; j++) xs[j] = 0.3 - 0.1 * j;
    double a = 0.6, bb = 1.7;
    void *tp = __enzyme_augmentfwd((void *)scaled, a, enzyme_dup, xs, dxs, enzyme_const, N, bb);
    d2 g = __enzyme_reverse_d2((void *)scaled, a, enzyme_dup, xs, dxs, enzyme_const, N, bb, 2.0, tp);
    double S = 0, Sx = 0;
    for (int j = 0; j < N; j++) { S += exp(a * xs[j]); Sx += xs[j] * exp(a * xs[j]); }
    hc_near("split da", g.a, 2.0 * (bb * S + a * bb * Sx), 1e-12);
    hc_near("split db", g.b, 2.0 * S * a, 1e-12);
    for (int j = 0; j < N; j++) hc_near("split dx", dxs[j], 2.0 * a * a * bb * exp(a * xs[j]), 1e-12);
  }
  /* 4. caller-owned tape, sized by __enzyme_augmentsize, reused twice */
  {
    double u[N], du[N], u0[N];
    long size = __enzyme_augmentsize((void *)relax, enzyme_dup, u, du, enzyme_const, N, enzyme_const, 3);
    hc_near("augmentsize > 0", size > 0, 1, 0);
    void *buf = malloc(size);
    for (int rep = 0; rep < 2; rep++) {
      for (int j = 0; j < N; j++) { u0[j] = u[j] = sin(1.0 + j + rep); du[j] = 1.0 + j; }
      __enzyme_augmentfwd((void *)relax, enzyme_allocated, size, enzyme_tape, buf,
                          enzyme_dup, u, du, enzyme_const, N, enzyme_const, 3);
      double ufinal[N];
      memcpy(ufinal, u, sizeof u);
      __enzyme_reverse((void *)relax, enzyme_allocated, size, enzyme_tape, buf,
                       enzyme_dup, u, du, enzyme_const, N, enzyme_const, 3);
      for (int k = 0; k < N; k++) {
        double up[N], um[N], h = hc_h(u0[k]);
        memcpy(up, u0, sizeof up); memcpy(um, u0, sizeof um);
        up[k] += h; um[k] -= h;
        relax(up, N, 3); relax(um, N, 3);
        double fd = 0;
        for (int j = 0; j < N; j++) fd += (1.0 + j) * (up[j] - um[j]) / (2 * h);
        hc_near("caller-owned tape du", du[k], fd, 1e-6);
      }
      double uref[N];
      memcpy(uref, u0, sizeof uref);
      relax(uref, N, 3);
      for (int j = 0; j < N; j++) hc_near("augmented pass updated u", ufinal[j], uref[j], 1e-15);
    }
    free(buf);
  }
  return hc_done();
}
