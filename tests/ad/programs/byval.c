/* Structs passed by value in memory (byval): the callee writes its private copy, which must
 * not reach the caller's struct, and the copy's adjoints must flow back to the caller's. */
#include "adcheck.h"
double __enzyme_autodiff(void *, ...);
void *__enzyme_augmentfwd(void *, ...);
double __enzyme_reverse(void *, ...);
extern int enzyme_dup, enzyme_const, enzyme_out;

typedef struct { double x, y, z, w; } V4;
typedef struct { int n; double a; int k; double b[3]; } Mixed;   /* ints between doubles */
typedef struct { const double *w; int n; double s; double pad[2]; } WithPtr;

__attribute__((noinline)) V4 scale4(V4 a, double s) { a.x *= s; a.y *= s; a.z *= s; a.w = sin(a.w) * s; return a; }
__attribute__((noinline)) double dot4(V4 a, V4 b) { return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w; }
__attribute__((noinline)) double use(double t) {
  V4 a = {t, 2 * t, t * t, 1.0 / t};
  V4 b = scale4(a, t);
  double r = dot4(a, b);
  return r + a.x;   /* a is unchanged by scale4 */
}

/* the callee overwrites ints and doubles of its copy, in a loop */
__attribute__((noinline)) double mixed_sum(Mixed m, double t) {
  double s = 0;
  m.a *= t;
  for (int i = 0; i < m.k; i++) { m.b[i] = m.b[i] * m.a + m.n; s += m.b[i] * m.b[i]; }
  m.n = 0;
  return s + m.a;
}
__attribute__((noinline)) double use_mixed(double t) {
  Mixed m = {3, t, 3, {t, 2 * t, exp(t)}};
  double r = mixed_sum(m, t);
  r += mixed_sum(m, 2 * t);        /* the first call must not have changed m */
  return r * m.a + m.b[2] + m.n;
}

/* a pointer inside the struct: its shadow comes from the caller's shadow copy */
__attribute__((noinline)) double weighted(WithPtr p, double t) {
  double s = 0;
  for (int i = 0; i < p.n; i++) { p.s += p.w[i] * t; s += p.s * p.pad[i % 2]; }
  p.pad[0] = 0;
  return s;
}
static double W[3];
__attribute__((noinline)) double use_ptr(const double *w, double t) {
  WithPtr p = {w, 3, t, {t * t, 1.5}};
  double r = weighted(p, t);
  return r + p.s * p.pad[0];
}
static double use_ptr_w0(double w0) { double w[3] = {w0, W[1], W[2]}; return use_ptr(w, 0.8); }

/* byval callee inside a loop (tape records per iteration) */
__attribute__((noinline)) double loop_use(double t, int n) {
  V4 a = {t, t + 1, t * 0.5, t};
  double s = 0;
  for (int i = 0; i < n; i++) {
    V4 b = scale4(a, t + i);
    s += dot4(b, a);
    a.x += 0.1 * s;
  }
  return s;
}
static double loop_use5(double t) { return loop_use(t, 5); }

/* a large struct: a double array, an array of nested structs, an int */
typedef struct { double f; double d; } In;
typedef struct { double a[20]; In in[3]; double g[5]; int n; } Big;
__attribute__((noinline)) double big(Big b, double t) {
  double s = 0;
  for (int i = 0; i < 20; i++) { b.a[i] *= t; s += b.a[i] * b.a[(i + 1) % 20]; }
  for (int i = 0; i < 3; i++) { b.in[i].d = b.in[i].d * b.in[i].f + t; s += b.in[i].d * b.in[i].d; }
  for (int i = 0; i < 5; i++) { b.g[i] = b.g[i] * t; s += b.g[i]; }
  return s + b.a[3] * b.n;
}
__attribute__((noinline)) double use_big(double t) {
  Big b;
  b.n = 3;
  for (int i = 0; i < 20; i++) b.a[i] = sin(t * i);
  for (int i = 0; i < 3; i++) { b.in[i].f = t * i; b.in[i].d = t + i; }
  for (int i = 0; i < 5; i++) b.g[i] = t * t + i;
  double r = big(b, t) + big(b, 2 * t);
  return r + b.a[5] * b.in[1].d + b.g[2];
}

/* the differentiated function itself takes a struct by value */
__attribute__((noinline)) double top(V4 a, double t) { a.x *= t; return a.x * a.y + sin(t * a.z) + a.w; }
static V4 TOP = {1.5, 2.0, 0.3, 4.0};
static double top_t(double t) { return top(TOP, t); }

int main(void) {
  ac_near("byval doubles", __enzyme_autodiff((void *)use, 0.7), AC_FD(use, 0.7), 1e-6);
  ac_near("byval ints and doubles", __enzyme_autodiff((void *)use_mixed, 0.6), AC_FD(use_mixed, 0.6), 1e-6);
  ac_near("byval in a loop", __enzyme_autodiff((void *)loop_use, 0.4, enzyme_const, 5), AC_FD(loop_use5, 0.4), 1e-6);

  W[0] = 0.3; W[1] = -0.7; W[2] = 1.1;
  double dw[3] = {0};
  double dt = __enzyme_autodiff((void *)use_ptr, enzyme_dup, W, dw, 0.8);
  double fdw = AC_FD(use_ptr_w0, W[0]);
  ac_near("byval pointer field (shadow)", dw[0], fdw, 1e-6);
  ac_near("byval pointer field (scalar)", dt, (use_ptr(W, 0.8 + 1e-6) - use_ptr(W, 0.8 - 1e-6)) / 2e-6, 1e-6);

  /* split mode: the same functions through augmentfwd / reverse */
  void *tape = __enzyme_augmentfwd((void *)use, 0.7);
  ac_near("split byval doubles", __enzyme_reverse((void *)use, 0.7, 1.0, tape), AC_FD(use, 0.7), 1e-6);
  tape = __enzyme_augmentfwd((void *)use_mixed, 0.6);
  ac_near("split byval ints and doubles", __enzyme_reverse((void *)use_mixed, 0.6, 2.0, tape),
          2 * AC_FD(use_mixed, 0.6), 1e-6);
  tape = __enzyme_augmentfwd((void *)loop_use, 0.4, enzyme_const, 5);
  ac_near("split byval in a loop", __enzyme_reverse((void *)loop_use, 0.4, enzyme_const, 5, 1.0, tape),
          AC_FD(loop_use5, 0.4), 1e-6);
  V4 top_a = TOP;
  ac_near("top-level byval", __enzyme_autodiff((void *)top, enzyme_const, top_a, 0.8), AC_FD(top_t, 0.8), 1e-6);
  ac_near("top-level byval copy", top_a.x, 1.5, 0);
  ac_near("large byval struct", __enzyme_autodiff((void *)use_big, 0.4), AC_FD(use_big, 0.4), 1e-6);
  tape = __enzyme_augmentfwd((void *)use_big, 0.4);
  ac_near("split large byval struct", __enzyme_reverse((void *)use_big, 0.4, 1.0, tape), AC_FD(use_big, 0.4), 1e-6);
  return ac_done();
}
