"""Structs with a union member holding a double, copied whole.

The class: a tagged value `struct {int tag; union {double d; long i;} u;}` (an interpreter's
value, a JSON number, a variant written in C) copied by struct assignment. clang tags a
union member `char` in the copy's `!tbaa.struct` (`{0, 4, int}, {8, 8, omnipotent char}`),
and the copy was typed from the tags it understood: "int", so the reverse sweep moved no
adjoint and every gradient through the copied values was 0 -- silently, with AD before
optimization (at -O0 and -O2 the copies are inlined and split into fields first). Fields
tagged only `char` now send the copy to the memory type analysis as well
(`types.memcpy_element_kind`). Checked in reverse and forward mode against central
differences at -O0, -O2 and with AD before optimization (3 of 12 builds wrong or crashing
before; the stack machine's stayed wrong with AD before optimization until calls returning
the union in integer registers were inlined: KEPT_APART); a union that also holds a pointer
must be right or refused (it crashed with AD before optimization).
"""
from __future__ import annotations

import pytest
from ad_helpers import FD_HEAD, LEVELS, check_gradients, fd_main, right_or_refused

PROGRAMS = {
    # an array of tagged numbers reversed by struct assignment, read by a helper
    "tagged_numbers_reversed": r"""
typedef struct { int tag; union { double d; long i; } u; } value;
static double num(const value *v) { return v->tag ? v->u.d : (double)v->u.i; }
double f(const double *x) {
  value vs[8], ws[8];
  for (int i = 0; i < 8; i++) { vs[i].tag = i % 3 != 0; if (vs[i].tag) vs[i].u.d = x[i % 4] * (i + 1); else vs[i].u.i = i; }
  for (int i = 0; i < 8; i++) ws[i] = vs[7 - i];
  double s = 0;
  for (int i = 0; i < 8; i++) s += num(&ws[i]) * num(&ws[i]) * (i + 1);
  return s;
}
""",
    # a stack machine whose cells are tagged values pushed and popped by assignment
    "stack_machine": r"""
typedef struct { char kind; union { double num; int op; } as; } cell;
typedef struct { cell items[16]; int top; } stack;
static void push(stack *s, cell c) { s->items[s->top++] = c; }
static cell pop(stack *s) { return s->items[--s->top]; }
double f(const double *x) {
  stack s = {.top = 0};
  for (int i = 0; i < 4; i++) { cell c = {'n', {.num = x[i]}}; push(&s, c); }
  cell mul = {'o', {.op = '*'}}, add = {'o', {.op = '+'}};
  cell prog[3] = {mul, add, mul};
  for (int k = 0; k < 3; k++) {
    cell b = pop(&s), a = pop(&s);
    cell r = {'n', {.num = prog[k].as.op == '*' ? a.as.num * b.as.num : a.as.num + sin(b.as.num)}};
    push(&s, r);
  }
  return pop(&s).as.num;
}
""",
    # a float pair and a double sharing storage, the struct copied into a ring buffer
    "ring_of_unions": r"""
typedef struct { int n; union { double d; float f[2]; } v; double w; } sample;
double f(const double *x) {
  sample ring[5];
  for (int i = 0; i < 10; i++) {
    sample s = {i, {.d = x[i % 4] + 0.1 * i}, x[(i + 1) % 4]};
    ring[i % 5] = s;
  }
  double acc = 0;
  for (int i = 0; i < 5; i++) acc += ring[i].v.d * ring[i].w + ring[i].n;
  return acc;
}
""",
}

# a union of a double and a pointer: the copy mixes the two in one word
POINTER_UNION = r"""
typedef struct { int kind; union { double num; const double *ref; } u; } operand;
static double value_of(const operand *o) { return o->kind ? o->u.num : *o->u.ref; }
double f(const double *x) {
  operand ops[6], copy[6];
  for (int i = 0; i < 6; i++) { ops[i].kind = i % 2; if (i % 2) ops[i].u.num = x[i % 4] * 2; else ops[i].u.ref = &x[(i + 1) % 4]; }
  for (int i = 0; i < 6; i++) copy[i] = ops[(i + 2) % 6];
  double s = 0;
  for (int i = 0; i < 6; i++) s += value_of(&copy[i]) * (i + 1) * value_of(&copy[(i + 1) % 6]);
  return s;
}
"""


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_tagged_unions(tmp_path, name, level):
    check_gradients(tmp_path, FD_HEAD + PROGRAMS[name] + fd_main(4), *LEVELS[level], agree=1e-9)


# The class of `stack_machine` with AD before optimization: a struct holding a union of a
# double and an integer crosses a call that stays a call, in integer registers (x86-64
# classes the union INTEGER): `pop` returns `{ i8, i64 }` and the caller takes the `i64`
# element as a double (`extractvalue` then `bitcast`). Nothing on the callee's side shows a
# float, so the callee was not inlined (ad/boundaries.py) and both gradients were 0, silently.
# An element of a call's aggregate result taken as a float now marks the callee for inlining,
# as a whole integer result does. The members keep their helpers `noinline`, so they cross
# the call at every level; two are refused cleanly with AD before optimization (the int and
# the double of one union merged by a conditional, as integers).
KEPT_APART = {
    # a tagged value made by a helper kept apart and returned by value ({ i32, i64 })
    "tagged_value_returned": r"""
typedef struct { int tag; union { double d; long i; } u; } value;
__attribute__((noinline)) static value make(double d, int k) {
  value v; v.tag = k % 2; if (v.tag) v.u.d = d * d + k; else v.u.i = k; return v;
}
double f(const double *x) {
  double s = 0;
  for (int k = 0; k < 6; k++) { value v = make(x[k % 4], k); s += v.tag ? v.u.d * x[(k + 1) % 4] : (double)v.u.i; }
  return s;
}
""",
    # the stack machine with push and pop kept apart
    "stack_pop_kept_apart": r"""
typedef struct { char kind; union { double num; int op; } as; } cell;
typedef struct { cell items[16]; int top; } stack;
__attribute__((noinline)) static void push(stack *s, cell c) { s->items[s->top++] = c; }
__attribute__((noinline)) static cell pop(stack *s) { return s->items[--s->top]; }
double f(const double *x) {
  stack s = {.top = 0};
  for (int i = 0; i < 4; i++) { cell c = {'n', {.num = x[i]}}; push(&s, c); }
  for (int k = 0; k < 3; k++) {
    cell b = pop(&s), a = pop(&s);
    cell r = {'n', {.num = k % 2 ? a.as.num * b.as.num : a.as.num + sin(b.as.num)}};
    push(&s, r);
  }
  return pop(&s).as.num;
}
""",
    # an 8-byte union alone, returned in one integer register
    "union_word_returned": r"""
typedef union { double d; long bits; } word;
__attribute__((noinline)) static word at(const word *w, int k) { return w[k]; }
double f(const double *x) {
  word ws[4];
  for (int i = 0; i < 4; i++) ws[i].d = x[i] * (i + 1);
  double s = 0;
  for (int i = 0; i < 4; i++) { word w = at(ws, 3 - i); s += w.d * w.d * x[i]; }
  return s;
}
""",
    # the union passed by value into a reader kept apart
    "union_passed_by_value": r"""
typedef struct { int tag; union { double d; long i; } u; } value;
__attribute__((noinline)) static double num(value v) { return v.tag ? v.u.d : (double)v.u.i; }
double f(const double *x) {
  double s = 0;
  for (int k = 0; k < 6; k++) {
    value v; v.tag = k != 2; if (v.tag) v.u.d = x[k % 4] * x[(k + 2) % 4]; else v.u.i = k;
    s += num(v) * (k + 1);
  }
  return s;
}
""",
}
REFUSED_BEFORE_OPT = {"tagged_value_returned", "union_passed_by_value"}


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(KEPT_APART))
def test_unions_crossing_calls_kept_apart(tmp_path, name, level):
    refused = "travel as an integer" if level == "adbefore" and name in REFUSED_BEFORE_OPT else None
    check_gradients(tmp_path, FD_HEAD + KEPT_APART[name] + fd_main(4), *LEVELS[level], may_refuse=refused)


@pytest.mark.parametrize("level", sorted(LEVELS))
def test_union_of_double_and_pointer_is_right_or_refused(tmp_path, level):
    flags, env = LEVELS[level]
    right_or_refused(tmp_path, FD_HEAD + POINTER_UNION + fd_main(4), flags, env)
