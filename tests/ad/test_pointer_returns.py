"""Functions that return a pointer to memory holding active data without being given any
shadowed pointer: constructors and factories (`mk(x * x)` allocating a node and storing an
active value into it, `new Node(v)`, a helper filling a static buffer, a chain of such
helpers, a list grown from NULL).

The class: forward mode decided that a called function returns its pointer's shadow only
when one of the call's pointer arguments had a shadow, so the block such a constructor
returned had none, and loads through it carried no tangent: a silent zero forward
derivative at -O2 (reverse mode asked the callee's activity analysis, and was right). Both
modes now ask the same question (Engine.returns_shadow). A literal NULL passed to such a
helper (`push(NULL, v)`, then `push(head, v)`) is a pointer whose shadow is NULL, so every
call site shares one derived helper (conformance rev-16). Every program is checked in
reverse and forward mode against central differences at -O0, -O2 and with AD before
optimization."""
from __future__ import annotations

import pytest

from ad_helpers import CXX_FD_HEAD, CXX_FD_MAIN, FD_HEAD, LEVELS, check_fd_rows, fd_main, fd_rows

MAIN = fd_main()

PROGRAMS = {
    "constructor": r"""
struct node { double v; struct node *next; };
__attribute__((noinline)) static struct node *mk(double v) {
  struct node *n = malloc(sizeof *n); n->v = v; n->next = 0; return n;
}
__attribute__((noinline)) double f(const double *x) {
  struct node *a = mk(x[0] * x[1]), *b = mk(sin(x[2]) + x[3]);
  double r = a->v * b->v + a->v;
  free(a); free(b);
  return r;
}""",
    "constructor_chain": r"""
typedef struct { double *data; int n; } vec;
__attribute__((noinline)) static double *fill(int n, double v) {
  double *p = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) p[i] = v * (i + 1);
  return p;
}
__attribute__((noinline)) static vec *make_vec(int n, double v) {
  vec *w = malloc(sizeof *w); w->data = fill(n, v); w->n = n; return w;
}
__attribute__((noinline)) double f(const double *x) {
  vec *a = make_vec(3, x[0] * x[2]), *b = make_vec(3, x[1] - x[3]);
  double s = 0;
  for (int i = 0; i < 3; i++) s += a->data[i] * b->data[i] + exp(0.1 * a->data[i]);
  free(a->data); free(b->data); free(a); free(b);
  return s;
}""",
    "static_buffer": r"""
__attribute__((noinline)) static double *scratch(double v, double w) {
  static double buf[2];
  buf[0] = v * w; buf[1] = v + w;
  return buf;
}
__attribute__((noinline)) double f(const double *x) {
  double *p = scratch(x[0], x[1]);
  double r = p[0] * p[1];
  p = scratch(x[2], x[3]);
  return r + p[0] - p[1] * p[1];
}""",
    "list_from_null": r"""
struct node { double v; struct node *next; };
__attribute__((noinline)) static struct node *push(struct node *head, double v) {
  struct node *n = malloc(sizeof *n); n->v = v; n->next = head; return n;
}
__attribute__((noinline)) double f(const double *x) {
  struct node *h = push(NULL, x[0] * x[0]);
  for (int i = 1; i < 4; i++) h = push(h, x[i] * x[0]);
  double s = 0;
  while (h) { struct node *nx = h->next; s += h->v * h->v; free(h); h = nx; }
  return s;
}""",
    # a helper returning a pointer into a block that gets active data only through that
    # pointer (fuzz seed 8 of an earlier generator: a span whose length the optimizer
    # dropped): forward mode gave the returned pointer a shadow but not the block, then used
    # a shadow it never defined (invalid IR)
    "pointer_into_constant_block": r"""
__attribute__((noinline)) static double *tail_of(double *p, long k) { return p + k; }
__attribute__((noinline)) double f(const double *x) {
  double *b = malloc(6 * sizeof(double));
  for (int i = 0; i < 6; i++) b[i] = 0.3 + i;
  double *t = tail_of(b, 3);
  for (int q = 0; q < 2; q++) t[q] = tanh(t[q] * x[0] + x[q + 1]);
  double s = x[3];
  for (int i = 0; i < 6; i++) s += b[i] * (i + 1);
  free(b);
  return s;
}""",
    # accessors without shadowed arguments, through a wrapper, returning pointers into an
    # active global that the caller then writes active values through: forward mode asked
    # the callee for the pointer's shadow only when an argument had one, so the wrapper's
    # derivative returned no shadow and the tangents were silently zero (AD before
    # optimization; at -O2 the wrappers are inlined). Reverse mode was right.
    "accessor_wrappers": r"""
static double slots[16];
__attribute__((noinline)) static double *slot(int k) { return slots + k; }
__attribute__((noinline)) static double *slot_pair(int k) { return slot(2 * k + 1); }
__attribute__((noinline)) static double *slot_of(int k) { return k > 2 ? slot_pair(k - 3) : slot(k); }
__attribute__((noinline)) double f(const double *x) {
  double *p = slot_pair(1), *q = slot_of(4), *r = slot_of(1);
  p[0] = x[0] * x[1]; p[1] = sin(x[2]);
  q[0] = p[0] * x[3] + p[1];
  *r = cos(q[0]) * x[0];
  return p[0] * q[0] + *r * *r + p[1];
}""",
}


@pytest.mark.parametrize("level", list(LEVELS))
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_pointer_returned_by_a_constructor(tmp_path, name, level):
    flags, env = LEVELS[level]
    check_fd_rows(fd_rows(tmp_path, FD_HEAD + PROGRAMS[name] + MAIN, flags, env), 4)


CXX_NEW = CXX_FD_HEAD + r"""
struct Particle {
  double x, v;
  Particle(double x0, double v0) : x(x0), v(v0) {}
  double energy() const { return 0.5 * v * v + std::cos(x); }
};
__attribute__((noinline)) Particle *spawn(double x, double v) { return new Particle(x, 2 * v); }
__attribute__((noinline)) double f(const double *x) {
  Particle *a = spawn(x[0], x[1]), *b = spawn(x[2] * x[3], x[0]);
  double e = a->energy() * b->energy();
  delete a; delete b;
  return e;
}
""" + CXX_FD_MAIN


@pytest.mark.parametrize("level", list(LEVELS))
def test_cxx_new_in_a_factory(tmp_path, level):
    flags, env = LEVELS[level]
    check_fd_rows(fd_rows(tmp_path, CXX_NEW, flags, env, cxx=True), 4)
