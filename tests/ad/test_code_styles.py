"""Programs written in styles the benchmark kernels and the conformance suite do not use.

Each is a common way numeric C or C++ is written: recursion over an index range, a linked
list built with malloc, a variable-length array, an opcode interpreter, Newton iterations
with a data-dependent exit, a table of function pointers, small matrices passed by value,
a buffer grown with realloc, `long double` accumulation, a static scratch array written by
a helper, a `goto` loop, a histogram zeroed with memset, frexp/ldexp and fmin/fmax, a
lazily filled static table, a struct returned by value, Gauss-Jordan elimination with row
pivoting, a Cholesky factorization, a softmax with max subtraction, a periodic 2-D stencil,
Horner's rule over a constant table, and a Runge-Kutta integrator calling its right-hand
side through a pointer; in C++ a `std::vector` with `push_back` and `std::accumulate`,
virtual calls, a lambda capturing an active value, a matrix template, `std::complex`, and a
`unique_ptr<double[]>` buffer. Every one was right in reverse and forward mode at -O0, -O2
and with AD before optimization when written; they stay here as regression guards, each
checked against central differences.
"""
from __future__ import annotations

import pytest

from ad_helpers import CXX_FD_HEAD, CXX_FD_MAIN, LEVELS, check_fd_rows, check_program_gradient, fd_rows

C_PROGRAMS = {
    "cholesky": r"""
double f(const double *x) {
  double a[3][3] = {{4 + x[0] * x[0], x[1], 0.5}, {x[1], 3 + x[2] * x[2], x[3]}, {0.5, x[3], 5 + x[0]}};
  double l[3][3] = {{0}};
  for (int i = 0; i < 3; i++)
    for (int j = 0; j <= i; j++) {
      double s = a[i][j];
      for (int k = 0; k < j; k++) s -= l[i][k] * l[j][k];
      l[i][j] = (i == j) ? sqrt(s) : s / l[j][j];
    }
  return log(l[0][0]) + log(l[1][1]) + log(l[2][2]) + l[2][1] * l[1][0];
}
""",
    "fnptr_table": r"""
static double sq(double v) { return v * v; }
static double sn(double v) { return sin(v); }
static double (*const ops[2])(double) = {sq, sn};
double f(const double *x) { double s = 0; for (int i = 0; i < 4; i++) s += ops[i & 1](x[i]) * (i + 1); return s; }
""",
    "frexp_scale": r"""
double f(const double *x) {
  int e;
  double m = frexp(x[0] * x[1] + 3.0, &e);
  return ldexp(m, e) * x[2] + fmax(x[3], 0.1) * fmin(x[0], x[2]);
}
""",
    "gauss_jordan_pivot": r"""
__attribute__((noinline)) static double solve3(double a[3][4]) {
  for (int c = 0; c < 3; c++) {
    int p = c;
    for (int r = c + 1; r < 3; r++) if (fabs(a[r][c]) > fabs(a[p][c])) p = r;
    if (p != c) for (int k = 0; k < 4; k++) { double t = a[c][k]; a[c][k] = a[p][k]; a[p][k] = t; }
    for (int r = 0; r < 3; r++) if (r != c) { double m = a[r][c] / a[c][c]; for (int k = c; k < 4; k++) a[r][k] -= m * a[c][k]; }
  }
  return a[0][3] / a[0][0] + 2 * a[1][3] / a[1][1] - a[2][3] / a[2][2];
}
double f(const double *x) {
  double a[3][4] = {{x[0], 1, 0.5, x[3]}, {2, x[1], 1, 1}, {0.3, 1, x[2] + 3, x[0] * x[1]}};
  return solve3(a);
}
""",
    "goto_loop": r"""
double f(const double *x) {
  double s = 0.1; int i = 0;
top:
  s = s * 0.9 + sin(x[i & 3] * s + 1.0);
  if (++i < 7) goto top;
  return s;
}
""",
    "horner_table": r"""
static const double P[6] = {1.0, -0.5, 0.25, 0.125, -0.0625, 0.03125};
__attribute__((noinline)) static double horner(const double *c, int n, double t) { double r = c[n - 1]; for (int i = n - 2; i >= 0; i--) r = r * t + c[i]; return r; }
double f(const double *x) { double s = 0; for (int i = 0; i < 4; i++) s += horner(P, 6, x[i]) * x[(i + 1) % 4]; return s; }
""",
    "interpreter": r"""
enum { PUSHX, ADD, MUL, SIN, END };
static const int code[] = {PUSHX, 0, PUSHX, 1, MUL, PUSHX, 2, SIN, ADD, PUSHX, 3, MUL, END};
double f(const double *x) {
  double stack[8]; int sp = 0, pc = 0;
  for (;;) {
    switch (code[pc++]) {
      case PUSHX: stack[sp++] = x[code[pc++]]; break;
      case ADD: sp--; stack[sp - 1] += stack[sp]; break;
      case MUL: sp--; stack[sp - 1] *= stack[sp]; break;
      case SIN: stack[sp - 1] = sin(stack[sp - 1]); break;
      default: return stack[0];
    }
  }
}
""",
    "linked_list": r"""
struct node { double v; struct node *next; };
double f(const double *x) {
  struct node *head = 0;
  for (int i = 0; i < 4; i++) { struct node *n = malloc(sizeof *n); n->v = x[i] * x[i]; n->next = head; head = n; }
  double s = 0; int k = 1;
  while (head) { s += k++ * sin(head->v); struct node *t = head->next; free(head); head = t; }
  return s;
}
""",
    "logsumexp_softmax": r"""
__attribute__((noinline)) static void softmax(const double *z, double *p, int n) {
  double m = z[0];
  for (int i = 1; i < n; i++) m = fmax(m, z[i]);
  double s = 0;
  for (int i = 0; i < n; i++) { p[i] = exp(z[i] - m); s += p[i]; }
  for (int i = 0; i < n; i++) p[i] /= s;
}
double f(const double *x) {
  double z[4], p[4];
  for (int i = 0; i < 4; i++) z[i] = x[i] * (i + 1) - x[(i + 1) % 4];
  softmax(z, p, 4);
  return p[0] * 3 + p[1] * 2 - p[3];
}
""",
    "long_double_acc": r"""
double f(const double *x) {
  long double s = 0;
  for (int i = 0; i < 4; i++) s += (long double)x[i] * x[(i + 1) % 4];
  return (double)s * sin(x[0]);
}
""",
    "matrix_struct_array": r"""
typedef struct { double m[2][2]; } mat2;
static mat2 mul(mat2 a, mat2 b) { mat2 c; for (int i = 0; i < 2; i++) for (int j = 0; j < 2; j++) c.m[i][j] = a.m[i][0] * b.m[0][j] + a.m[i][1] * b.m[1][j]; return c; }
double f(const double *x) {
  mat2 a = {{{x[0], x[1]}, {x[2], x[3]}}}, p = a;
  for (int k = 0; k < 3; k++) p = mul(p, a);
  return p.m[0][0] + p.m[1][1] * 0.5 + p.m[0][1];
}
""",
    "memo_static_local": r"""
__attribute__((noinline)) static double weight(int k) {
  static double table[8]; static int ready = 0;
  if (!ready) { for (int i = 0; i < 8; i++) table[i] = 1.0 / (1 + i); ready = 1; }
  return table[k & 7];
}
double f(const double *x) { double s = 0; for (int i = 0; i < 6; i++) s += weight(i) * sin(x[i % 4] * (i + 1)); return s; }
""",
    "memset_then_accumulate": r"""
double f(const double *x) {
  double h[5];
  memset(h, 0, sizeof h);
  for (int i = 0; i < 4; i++) { int b = (int)(fabs(x[i]) * 2 + 0.25) % 5; h[b] += x[i] * x[i]; }
  double s = 0;
  for (int b = 0; b < 5; b++) s += (b + 1) * h[b];
  return s;
}
""",
    "newton": r"""
__attribute__((noinline)) static double cbrt_newton(double a) {
  double y = a > 1 ? a : 1;
  for (int it = 0; it < 100; it++) { double ny = y - (y * y * y - a) / (3 * y * y); if (fabs(ny - y) < 1e-14 * fabs(y)) { y = ny; break; } y = ny; }
  return y;
}
double f(const double *x) { return cbrt_newton(2.0 + x[0] * x[0]) * x[1] + cbrt_newton(3.0 + x[2] * x[3]); }
""",
    "realloc_grow": r"""
double f(const double *x) {
  int cap = 1, n = 0; double *v = malloc(sizeof(double));
  for (int i = 0; i < 9; i++) { if (n == cap) { cap *= 2; v = realloc(v, cap * sizeof(double)); } v[n++] = x[i % 4] * (i + 1); }
  double s = 0; for (int i = 0; i < n; i++) s += sin(v[i]) * v[(i + 3) % n];
  free(v); return s;
}
""",
    "recursion_tree": r"""
__attribute__((noinline)) static double tsum(const double *x, int lo, int hi) {
  if (hi - lo == 1) return sin(x[lo]);
  int mid = (lo + hi) / 2;
  return tsum(x, lo, mid) * tsum(x, mid, hi) + 0.5;
}
double f(const double *x) { return tsum(x, 0, 4); }
""",
    "rk4_fnptr": r"""
typedef void (*rhs_t)(double, const double *, double *, const double *);
static void osc(double t, const double *y, double *dy, const double *p) { dy[0] = y[1]; dy[1] = -p[0] * y[0] - p[1] * y[1] + sin(t); }
__attribute__((noinline)) static void rk4(rhs_t f, double *y, const double *p, double h, int steps) {
  double k1[2], k2[2], k3[2], k4[2], t[2];
  for (int s = 0; s < steps; s++) {
    double tt = s * h;
    f(tt, y, k1, p);
    for (int i = 0; i < 2; i++) t[i] = y[i] + 0.5 * h * k1[i]; f(tt + 0.5 * h, t, k2, p);
    for (int i = 0; i < 2; i++) t[i] = y[i] + 0.5 * h * k2[i]; f(tt + 0.5 * h, t, k3, p);
    for (int i = 0; i < 2; i++) t[i] = y[i] + h * k3[i]; f(tt + h, t, k4, p);
    for (int i = 0; i < 2; i++) y[i] += h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
  }
}
double f(const double *x) { double y[2] = {x[0], x[1]}; double p[2] = {1 + x[2] * x[2], 0.1 + 0.05 * x[3]}; rk4(osc, y, p, 0.05, 20); return y[0] * y[0] + 0.5 * y[1]; }
""",
    "static_scratch": r"""
static double scratch[16];
__attribute__((noinline)) static void fill(const double *x, int n) { for (int i = 0; i < n; i++) scratch[i] = exp(0.2 * x[i % 4]) * (i + 1); }
double f(const double *x) {
  fill(x, 8);
  double s = 0;
  for (int i = 0; i < 8; i++) s += scratch[i] * scratch[(i + 3) % 8];
  return s;
}
""",
    "stencil2d_periodic": r"""
double f(const double *x) {
  enum { N = 5 };
  double u[N][N], v[N][N];
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) u[i][j] = x[(i + j) % 4] * (1 + 0.1 * i);
  for (int t = 0; t < 3; t++) {
    for (int i = 0; i < N; i++) for (int j = 0; j < N; j++)
      v[i][j] = u[i][j] + 0.1 * (u[(i + 1) % N][j] + u[(i + N - 1) % N][j] + u[i][(j + 1) % N] + u[i][(j + N - 1) % N] - 4 * u[i][j]) - 0.05 * u[i][j] * u[i][j] * u[i][j];
    for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) u[i][j] = v[i][j];
  }
  double s = 0; for (int i = 0; i < N; i++) s += u[i][i] * u[i][(i + 2) % N];
  return s;
}
""",
    "two_outputs_struct_return": r"""
typedef struct { double lo, hi; } pair;
__attribute__((noinline)) static pair minmax(const double *v, int n) { pair p = {v[0], v[0]}; for (int i = 1; i < n; i++) { if (v[i] < p.lo) p.lo = v[i]; if (v[i] > p.hi) p.hi = v[i]; } return p; }
double f(const double *x) { double v[4]; for (int i = 0; i < 4; i++) v[i] = sin(x[i]) + x[i]; pair p = minmax(v, 4); return p.hi * p.hi - p.lo; }
""",
    "vla": r"""
__attribute__((noinline)) static double work(const double *x, int n) {
  double t[n];
  for (int i = 0; i < n; i++) t[i] = exp(0.3 * x[i]);
  double s = 0;
  for (int i = 0; i < n; i++) s += t[i] * t[(i + 1) % n];
  return s;
}
double f(const double *x) { return work(x, 4); }
""",
}

CXX_PROGRAMS = {
    "complex_std": r"""
#include <complex>
double f(const double *x) {
  std::complex<double> z(x[0], x[1]), w(x[2], x[3]);
  std::complex<double> r = std::exp(z * w) / (z + 2.0);
  return std::abs(r) + r.real();
}
""",
    "eigenish_matrix": r"""
template <int N> struct Mat { double d[N * N]; double &operator()(int i, int j) { return d[i * N + j]; } double operator()(int i, int j) const { return d[i * N + j]; } };
template <int N> static Mat<N> mul(const Mat<N> &a, const Mat<N> &b) { Mat<N> c{}; for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) for (int k = 0; k < N; k++) c(i, j) += a(i, k) * b(k, j); return c; }
double f(const double *x) {
  Mat<2> m{{x[0], x[1], x[2], x[3]}};
  Mat<2> p = mul(m, mul(m, m));
  return p(0, 0) * p(1, 1) - p(0, 1) * p(1, 0);
}
""",
    "lambda_map": r"""
#include <array>
#include <algorithm>
template <class F> static void map(std::array<double, 4> &a, F fn) { for (auto &e : a) e = fn(e); }
double f(const double *x) {
  std::array<double, 4> a{x[0], x[1], x[2], x[3]};
  double scale = x[3];
  map(a, [scale](double v) { return std::exp(0.3 * v) * scale; });
  return *std::max_element(a.begin(), a.end()) + a[0] * a[1];
}
""",
    "unique_ptr_buffer": r"""
#include <memory>
double f(const double *x) {
  std::unique_ptr<double[]> b(new double[8]);
  for (int i = 0; i < 8; i++) b[i] = x[i % 4] * (i + 1);
  double s = 0;
  for (int i = 1; i < 8; i++) s += std::cos(b[i]) * b[i - 1];
  return s;
}
""",
    "vector_accumulate": r"""
#include <vector>
#include <numeric>
double f(const double *x) {
  std::vector<double> v(x, x + 4);
  for (auto &e : v) e = std::sin(e) * e;
  std::vector<double> w;
  for (int i = 0; i < 4; i++) w.push_back(v[i] * v[(i + 1) % 4]);
  return std::accumulate(w.begin(), w.end(), 0.0);
}
""",
    "virtual_shapes": r"""
struct Term { virtual double eval(const double *x) const = 0; virtual ~Term() {} };
struct Sq : Term { int i; Sq(int i) : i(i) {} double eval(const double *x) const override { return x[i] * x[i]; } };
struct Sn : Term { int i; double a; Sn(int i, double a) : i(i), a(a) {} double eval(const double *x) const override { return a * std::sin(x[i]); } };
__attribute__((noinline)) double total(Term **t, int n, const double *x) { double s = 0; for (int k = 0; k < n; k++) s += t[k]->eval(x); return s; }
double f(const double *x) {
  Sq a(0); Sn b(1, 2.0); Sq c(2); Sn d(3, -0.5);
  Term *t[4] = {&a, &b, &c, &d};
  return total(t, 4, x);
}
""",
}


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(C_PROGRAMS))
def test_c_styles(name, level, tmp_path):
    check_program_gradient(tmp_path, C_PROGRAMS[name], level)


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(CXX_PROGRAMS))
def test_cxx_styles(name, level, tmp_path):
    flags, env = LEVELS[level]
    check_fd_rows(fd_rows(tmp_path, CXX_FD_HEAD + CXX_PROGRAMS[name] + CXX_FD_MAIN, flags, env, cxx=True), 4)
