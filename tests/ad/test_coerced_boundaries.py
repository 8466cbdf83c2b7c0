"""Floats that cross a call in an ABI-coerced register (enzyme_build/ad/boundaries.py).

The class (issue 13; conformance rev-21, rev-22): small structs passed or returned by value
through functions that are not inlined. x86-64 passes `{float, float}` (and
`std::complex<float>`, the first half of `{float, float, double}`) as one `<2 x float>`,
and `{float, int}` / `{int, float}` as one `i64` holding the float's bits. Before, the
first was refused ("vector code on active values … crosses a call") and the second was
refused (earlier still: a silent zero). The stage now inlines such functions into their
callers and the registers fold away. Every program is checked in reverse and forward mode
against central differences at -O0, -O2 and with AD before optimization; a recursive
function with a packed struct stays a clear error.
"""
from __future__ import annotations


import pytest

from ad_helpers import FD_HEAD, LEVELS, check_fd_rows, fd_main, fd_rows, right_or_refused

HEAD = FD_HEAD
MAIN = fd_main(h=3e-3)   # float arithmetic: a larger step keeps rounding out of the difference

PROGRAMS = {
    # {float, float} in and out as <2 x float>
    "float_pair": r"""
typedef struct { float x, y; } v2;
__attribute__((noinline)) static v2 rot(v2 v, float c, float s) { v2 r = {c * v.x - s * v.y, s * v.x + c * v.y}; return r; }
__attribute__((noinline)) double f(const double *x) {
  v2 v = {(float)x[0], (float)x[1]};
  v2 r = rot(v, (float)cos(x[2]), (float)sin(x[2]));
  return r.x * r.x * x[3] + r.y;
}""",
    # {float, int}: the float in the low half of an i64, through two helpers
    "float_int": r"""
typedef struct { float val; int idx; } best;
__attribute__((noinline)) static best pick(const float *v, int n) {
  best b = {v[0], 0};
  for (int i = 1; i < n; i++) if (v[i] > b.val) { b.val = v[i]; b.idx = i; }
  return b;
}
__attribute__((noinline)) static double weigh(best b, double w) { return b.val * w * (b.idx + 1); }
__attribute__((noinline)) double f(const double *x) {
  float v[4];
  for (int i = 0; i < 4; i++) v[i] = (float)(x[i] * x[i] + 0.1 * i);
  return weigh(pick(v, 4), x[0]) + x[3];
}""",
    # {int, float}: the float in the high half; a forwarding helper in between
    "int_float_forwarded": r"""
typedef struct { int k; float w; } kw;
__attribute__((noinline)) static kw make(int k, double w) { kw r = {k, (float)(w * w)}; return r; }
__attribute__((noinline)) static double use(kw a, double s) { return a.w * s + a.k; }
__attribute__((noinline)) static double forward_it(kw a, double s) { return use(a, s) * 2; }
__attribute__((noinline)) double f(const double *x) {
  return forward_it(make(3, x[1]), x[2]) + x[0] * x[3];
}""",
    # {float, float, double}: <2 x float> plus a double, returned through memory-free code
    "float_float_double": r"""
typedef struct { float a, b; double c; } mix;
__attribute__((noinline)) static mix scale(mix m, double s) { mix r = {m.a * (float)s, m.b + (float)s, m.c * s}; return r; }
__attribute__((noinline)) double f(const double *x) {
  mix m = {(float)x[0], (float)x[1], x[2]};
  mix r = scale(scale(m, x[3]), 0.5);
  return r.a * r.b + r.c;
}""",
    # a double copied into a uint64_t and passed / returned by value (an i64 argument)
    "double_bits_by_value": r"""
#include <string.h>
__attribute__((noinline)) static double helper(unsigned long long bits, double s) {
  double v; memcpy(&v, &bits, 8); return v * v * s;
}
__attribute__((noinline)) static unsigned long long tobits(double v) { unsigned long long b; memcpy(&b, &v, 8); return b; }
__attribute__((noinline)) double f(const double *x) {
  unsigned long long b; double t = sin(x[0]);
  memcpy(&b, &t, 8);
  return helper(b, x[1]) + helper(tobits(x[2] * x[3]), 1.0);
}""",
    # the callee never turns the bits back into a double: it stores the word into memory
    # the caller reads as doubles (Enzyme's subdoublestore), or loads a word the caller
    # takes as a double; only the caller's side shows the float
    "double_bits_stored_by_callee": r"""
#include <stdlib.h>
#include <string.h>
__attribute__((noinline)) static unsigned long long *store_word(unsigned long long bits) {
  unsigned long long *data = malloc(2 * sizeof *data);
  data[0] = bits; data[1] = 3;
  return data;
}
__attribute__((noinline)) static unsigned long long load_word(const unsigned long long *p, int k) { return p[k]; }
__attribute__((noinline)) double f(const double *x) {
  double t = x[0] * x[1] + sin(x[2]);
  unsigned long long b; memcpy(&b, &t, 8);
  unsigned long long *w = store_word(b);
  double back = ((double *)w)[0];
  unsigned long long c = load_word((const unsigned long long *)x, 3);
  double x3; memcpy(&x3, &c, 8);
  free(w);
  return back * x3 + back;
}""",
    # a tagged word {uint64_t bits; int tag} (two registers: i64, i32)
    "tagged_word": r"""
#include <string.h>
typedef struct { unsigned long long bits; int tag; } word;
__attribute__((noinline)) static word box(double v, int tag) { word w; memcpy(&w.bits, &v, 8); w.tag = tag; return w; }
__attribute__((noinline)) static double unbox(word w) { double v; memcpy(&v, &w.bits, 8); return w.tag ? v * v : v; }
__attribute__((noinline)) double f(const double *x) {
  return unbox(box(x[0] * x[1], 1)) + unbox(box(exp(x[2]), 0)) * x[3];
}""",
    # {double, long} returned by value: a { double, i64 } aggregate (before optimization
    # nothing folds it; it was a silent zero with AD before optimization)
    "double_long_pair": r"""
struct DL { double d; long k; };
__attribute__((noinline)) static struct DL dl_mix(struct DL p, double w) { struct DL r = { tanh(p.d * w + 0.25), p.k + 1 }; return r; }
__attribute__((noinline)) double f(const double *x) {
  struct DL q = { x[1], 1 };
  q = dl_mix(q, x[2]);
  q = dl_mix(q, x[3]);
  return q.d * x[0] + 0.01 * q.k;
}""",
    # a loop calling a helper that takes and returns {float, float}
    "float_pair_loop": r"""
typedef struct { float re, im; } cf;
__attribute__((noinline)) static cf cmul(cf a, cf b) { cf r = {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; return r; }
__attribute__((noinline)) double f(const double *x) {
  cf z = {(float)x[0], (float)x[1]}, acc = {1.0f, 0.0f};
  for (int i = 0; i < 3; i++) acc = cmul(acc, z);
  cf w = {(float)x[2], (float)x[3]};
  acc = cmul(acc, w);
  return acc.re + 2 * acc.im;
}""",
}

@pytest.mark.parametrize("config", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_coerced_struct_by_value(tmp_path, name, config):
    flags, env = LEVELS[config]
    # float arithmetic: reverse and forward agree to float rounding, the difference to ~1e-3
    check_fd_rows(fd_rows(tmp_path, HEAD + PROGRAMS[name] + MAIN, flags, env), 4, agree=1e-6, fd_tol=2e-3)


def test_recursive_packed_struct_is_a_clear_error(tmp_path):
    text = HEAD + r"""
typedef struct { float val; int depth; } acc;
__attribute__((noinline)) static acc down(acc a, const double *x) {
  if (a.depth == 0) return a;
  acc b = {a.val * (float)x[a.depth % 4], a.depth - 1};
  return down(b, x);
}
__attribute__((noinline)) double f(const double *x) { acc a = {1.0f, 5}; return down(a, x).val; }
""" + MAIN
    err = right_or_refused(tmp_path, text, fd_tol=2e-3)
    if err is None:   # the optimizer turned the recursion into a loop: it was checked right
        return
    assert "travel as an integer" in err and "pass it by pointer" in err, err


def test_recursive_mixed_aggregate_is_a_clear_error(tmp_path):
    """A recursive function returning {double, long} by value cannot be inlined away: its
    result's derivative cannot be represented, so the build stops (it was a silent zero)."""
    text = HEAD + r"""
struct DL { double d; long k; };
__attribute__((noinline)) static struct DL down(struct DL p, const double *x) {
  if (p.k == 0) return p;
  struct DL q = { p.d * x[p.k % 4], p.k - 1 };
  return down(q, x);
}
__attribute__((noinline)) double f(const double *x) { struct DL p = { 1.0, 5 }; return down(p, x).d; }
""" + MAIN
    err = right_or_refused(tmp_path, text, env={"ENZYME_BUILD_AD_BEFORE_OPT": "1"}, fd_tol=2e-3)
    if err is None:   # the recursion became a loop after all: it was checked right
        return
    assert "mixes floating-point and integer fields" in err and "fix:" in err, err


def test_detection_and_marking_on_ir():
    from enzyme_build.ad.boundaries import coerced_float_functions, mark_always_inline
    text = "\n".join([
        "define internal i64 @pack(float %a, i32 %k) #0 {",
        "bb:",
        "  %b = bitcast float %a to i32",
        "  %z = zext i32 %b to i64",
        "  %h = zext i32 %k to i64",
        "  %s = shl i64 %h, 32",
        "  %r = or disjoint i64 %s, %z",
        "  ret i64 %r",
        "}",
        "define internal <2 x float> @vec(<2 x float> %v) #0 {",
        "bb:",
        "  ret <2 x float> %v",
        "}",
        "define internal i64 @ints(i64 %v) #0 {",
        "bb:",
        "  %t = trunc i64 %v to i32",
        "  %z = zext i32 %t to i64",
        "  ret i64 %z",
        "}",
        "define double @f(float %a) {",
        "bb:",
        "  %p = call i64 @pack(float %a, i32 1)",
        "  %v = call <2 x float> @vec(<2 x float> zeroinitializer)",
        "  %i = call i64 @ints(i64 %p)",
        "  ret double 0.0",
        "}",
        "attributes #0 = { noinline nounwind optnone }"])
    assert coerced_float_functions(text) == {"@pack", "@vec"}
    assert coerced_float_functions(text, exclude={"pack"}) == {"@vec"}
    marked = mark_always_inline(text, {"@pack"})
    assert "define internal i64 @pack(float %a, i32 %k) #1 {" in marked
    assert "attributes #1 = { alwaysinline" in marked and "optnone" not in marked.split("attributes #1")[1]
    assert "define internal <2 x float> @vec(<2 x float> %v) #0 {" in marked
    import llvmlite.binding as llvm
    llvm.parse_assembly(marked).verify()


def test_caller_side_bits_are_detected_on_ir():
    """The callee only stores the word it gets, or returns a word it loaded: the float is seen
    at the caller alone (a double's bits passed, an integer result taken as a double)."""
    from enzyme_build.ad.boundaries import coerced_float_functions
    text = "\n".join([
        "define internal void @keep(i64 %w, ptr %p) {",
        "bb:",
        "  store i64 %w, ptr %p, align 8",
        "  ret void",
        "}",
        "define internal i64 @word(ptr %p) {",
        "bb:",
        "  %w = load i64, ptr %p, align 8",
        "  ret i64 %w",
        "}",
        "define internal i64 @count(i64 %n) {",
        "bb:",
        "  %m = add i64 %n, 1",
        "  ret i64 %m",
        "}",
        "define double @f(double %x, ptr %p) {",
        "bb:",
        "  %b = bitcast double %x to i64",
        "  call void @keep(i64 %b, ptr %p)",
        "  %w = call i64 @word(ptr %p)",
        "  %d = bitcast i64 %w to double",
        "  %n = call i64 @count(i64 3)",
        "  ret double %d",
        "}"])
    assert coerced_float_functions(text) == {"@keep", "@word"}
    assert coerced_float_functions(text, exclude={"keep"}) == {"@word"}
