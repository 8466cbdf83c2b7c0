"""Floating-point data moved through integers, differentiated as what the bytes are.

The class (issue 13, fuzz-01/03/05/14): a double or float copied through an integer of the
same width, or picked through one on a branch and read back as a float — `memcpy` into a
`uint64_t` and back (SROA leaves an i64 load/store pair with no type tag), a `uint64_t`
word-copy helper (tagged "long" by TBAA: the tag is not what the bytes are), a word pick
whose other word's load is left dead (fuzz seed 19368: a dead i64 load is no evidence of an
integer), a generic swap
through `uint64_t`, a word copy into the output array, a conditional `memmove` whose word
GVN forwards as a phi of two i64 loads, a select or loop-carried phi of words, a float
moved through `uint32_t`, and a struct whose integer field is copied next to its double
field (which must stay an integer). Each member is checked in reverse and forward mode
against the closed-form gradient at -O0, -O2 and with AD before optimization, and the
memory type analysis is checked on its own on IR.
"""
from __future__ import annotations

import math
import os
import subprocess
import sys

import pytest

from ad_helpers import LEVELS

ENZYME_BUILD = os.path.join(os.path.dirname(sys.executable), "enzyme-build")

HEAD = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
"""

MAIN = r"""
int main(void) {
  const double x[4] = {0.5, -1.25, 1.5, 0.75};
  double g[4] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, g);
  for (int i = 0; i < 4; i++) {
    double e[4] = {0}; e[i] = 1;
    printf("%.15g %.15g\n", g[i], __enzyme_fwddiff((void *)f, enzyme_dup, x, e));
  }
  return 0;
}
"""

X = [0.5, -1.25, 1.5, 0.75]

# callees filling and reading a buffer: what f moves in it is not forwarded from stores f
# sees, and the stores f makes before the read stay
WEIGH = r"""
__attribute__((noinline)) static void squares(double *b, const double *x) {
  for (int i = 0; i < 4; i++) b[i] = x[i] * x[i];
}
__attribute__((noinline)) static double weigh(const double *b) {
  double s = 0;
  for (int i = 0; i < 4; i++) s += (i + 1) * b[i];
  return s;
}"""

# name -> (body defining f, closed-form gradient at X)
PROGRAMS = {
    # memcpy through a local uint64_t inside one malloc'd buffer: b[3] = b[1]
    "memcpy_through_u64": (r"""
__attribute__((noinline)) double f(const double *x) {
  double *b = malloc(4 * sizeof(double));
  for (int i = 0; i < 4; i++) b[i] = x[i] * x[i];
  { uint64_t w; memcpy(&w, &b[1], sizeof w); memcpy(&b[3], &w, sizeof w); }
  double s = 0;
  for (int i = 0; i < 4; i++) s += (i + 1) * b[i];
  free(b);
  return s;
}""", [2 * X[0], 2 * X[1] * (2 + 4), 3 * 2 * X[2], 0.0]),
    # a noinline uint64_t word-copy helper (TBAA "long") copying doubles between buffers
    "word_copy_helper": (r"""
__attribute__((noinline)) void copy_words(void *dst, const void *src, int n) {
  uint64_t *d = dst; const uint64_t *s = src;
  for (int i = 0; i < n; i++) d[i] = s[i];
}
__attribute__((noinline)) double f(const double *x) {
  double a[4], b[4];
  for (int i = 0; i < 4; i++) a[i] = sin(x[i]);
  copy_words(b, a, 4);
  double s = 0;
  for (int i = 0; i < 4; i++) s += (i + 1) * b[i] * b[i];
  return s;
}""", [2 * (i + 1) * __import__("math").sin(X[i]) * __import__("math").cos(X[i]) for i in range(4)]),
    # a word pick whose select folds away, leaving the other word's i64 load dead (AD before
    # optimization keeps it): a dead load says nothing about what the bytes are
    "dead_word_load": (r"""
__attribute__((noinline)) static void copy_words3(void *dst, const void *src, int n) {
  for (int i = 0; i < n; i++) { uint64_t w; memcpy(&w, (const char *)src + 8 * i, 8); memcpy((char *)dst + 8 * i, &w, 8); }
}
__attribute__((noinline)) double f(const double *x) {
  double a[4];
  double *b = malloc(4 * sizeof(double));
  for (int i = 0; i < 4; i++) { a[i] = sin(x[i]); b[i] = x[i] * x[i]; }
  copy_words3(b + 1, a + 1, 3);
  { uint64_t u, v; memcpy(&u, &b[3], 8); memcpy(&v, &a[0], 8);
    uint64_t w = log(2.5625) > 0 ? u : v; memcpy(&b[3], &w, 8); }
  double s = b[0] + 2 * b[1] * b[2] + 3 * b[3];
  free(b);
  return s;
}""", [2 * X[0], 2 * math.cos(X[1]) * math.sin(X[2]), 2 * math.sin(X[1]) * math.cos(X[2]), 3 * math.cos(X[3])]),
    # a generic swap through uint64_t of two array elements
    "generic_swap": (r"""
__attribute__((noinline)) void swap_words(void *p, void *q) {
  uint64_t t; memcpy(&t, p, 8); memcpy(p, q, 8); memcpy(q, &t, 8);
}
__attribute__((noinline)) double f(const double *x) {
  double a[4];
  for (int i = 0; i < 4; i++) a[i] = x[i] * (i + 1);
  swap_words(&a[0], &a[2]);
  return a[0] * 10 + a[2] + a[1] * a[3];
}""", [1.0, 2 * 4 * X[3], 30.0, 4 * 2 * X[1]]),
    # a word copy into the output's own buffer from a malloc'd scratch buffer
    "word_into_array": (r"""
__attribute__((noinline)) double f(const double *x) {
  double out[2];
  double *buf = malloc(2 * sizeof(double));
  buf[0] = x[0] * x[1]; buf[1] = x[2];
  memcpy(out, buf, 8);
  out[1] = x[3];
  free(buf);
  return out[0] * out[1];
}""", [X[1] * X[3], X[0] * X[3], 0.0, X[0] * X[1]]),
    # the word picked on a data-dependent branch (a phi or select of integer copies)
    "word_from_branch": (r"""
__attribute__((noinline)) double f(const double *x) {
  double b[4];
  for (int i = 0; i < 4; i++) b[i] = x[i] * x[i];
  uint64_t w;
  if (x[3] > 0) memcpy(&w, &b[1], 8); else memcpy(&w, &b[2], 8);
  memcpy(&b[0], &w, 8);
  return b[0] * 3 + b[3];
}""", [0.0, 6 * X[1], 0.0, 2 * X[3]]),
    # the word picked on a branch (a conditional memmove GVN turns into a phi of two i64
    # loads) is stored again, read from memory by a callee and forwarded to a later read of
    # b[0] as `bitcast` of the phi (fuzz-14)
    "branch_word_read_as_double": (WEIGH + r"""
__attribute__((noinline)) double f(const double *x) {
  double *b = malloc(4 * sizeof(double));
  squares(b, x);
  if (x[3] > 0) memmove(b, b + 1, 8);
  { uint64_t w; memcpy(&w, &b[0], 8); memcpy(&b[3], &w, 8); }
  double s = weigh(b) + 5 * b[0];
  free(b);
  return s;
}""", [0.0, 24 * X[1], 6 * X[2], 0.0]),
    # the same with the branch not taken: the merged word is b[0]'s own
    "branch_word_not_taken": (WEIGH + r"""
__attribute__((noinline)) double f(const double *x) {
  double *b = malloc(4 * sizeof(double));
  squares(b, x);
  if (x[3] < 0) memmove(b, b + 1, 8);
  { uint64_t w; memcpy(&w, &b[0], 8); memcpy(&b[3], &w, 8); }
  double s = weigh(b) + 5 * b[0];
  free(b);
  return s;
}""", [20 * X[0], 4 * X[1], 6 * X[2], 0.0]),
    # a select of two words, stored and reinterpreted as a double
    "selected_word_reinterpreted": (WEIGH + r"""
__attribute__((noinline)) double f(const double *x) {
  double b[4];
  squares(b, x);
  uint64_t wa, wb; memcpy(&wa, &b[1], 8); memcpy(&wb, &b[2], 8);
  uint64_t w = x[3] > 0 ? wa : wb;
  memcpy(&b[0], &w, 8);
  double d; memcpy(&d, &w, 8);
  return weigh(b) + d * x[0];
}""", [X[1] ** 2, 2 * X[1] * (3 + X[0]), 6 * X[2], 8 * X[3]]),
    # the bits of the largest element kept across a loop (a phi web with a constant 0)
    "argmax_bits_in_loop": (WEIGH + r"""
__attribute__((noinline)) double f(const double *x) {
  double b[4];
  squares(b, x);
  uint64_t w = 0; double m = -1;
  for (int i = 0; i < 4; i++) { uint64_t t; memcpy(&t, &b[i], 8); if (b[i] > m) { w = t; m = b[i]; } }
  memcpy(&b[1], &w, 8);
  double d; memcpy(&d, &w, 8);
  return weigh(b) + 2 * d + x[3];
}""", [2 * X[0], 0.0, 14 * X[2], 1.0 + 8 * X[3]]),
    # sign-bit arithmetic on a double's bits loaded as an integer (a union or memcpy idiom
    # GVN leaves as `load i64`): x ^ SIGN is -x, and its derivative must follow
    "sign_flip_bits": (WEIGH + r"""
__attribute__((noinline)) double f(const double *x) {
  double *b = malloc(4 * sizeof(double));
  squares(b, x);
  uint64_t w; memcpy(&w, &b[1], 8); w ^= 0x8000000000000000ull;
  double d; memcpy(&d, &w, 8);
  double s = weigh(b) + d * x[0];
  free(b);
  return s;
}""", [2 * X[0] - X[1] ** 2, 4 * X[1] - 2 * X[1] * X[0], 6 * X[2], 8 * X[3]]),
    # the flipped word stored back over a double
    "sign_flip_stored": (WEIGH + r"""
__attribute__((noinline)) double f(const double *x) {
  double *b = malloc(4 * sizeof(double));
  squares(b, x);
  uint64_t w; memcpy(&w, &b[1], 8); w ^= 0x8000000000000000ull; memcpy(&b[3], &w, 8);
  double s = weigh(b);
  free(b);
  return s;
}""", [2 * X[0], -4 * X[1], 6 * X[2], 0.0]),
    # fabs by masking the sign bit off (x[1] < 0)
    "fabs_bits": (r"""
__attribute__((noinline)) double f(const double *x) {
  uint64_t w; memcpy(&w, &x[1], 8); w &= 0x7fffffffffffffffull;
  double d; memcpy(&d, &w, 8);
  return d * x[0] + x[2];
}""", [abs(X[1]), -X[0], 1.0, 0.0]),
    # -fabs by setting it
    "neg_fabs_bits": (r"""
__attribute__((noinline)) double f(const double *x) {
  uint64_t w; memcpy(&w, &x[2], 8); w |= 0x8000000000000000ull;
  double d; memcpy(&d, &w, 8);
  return d * d * x[3];
}""", [0.0, 0.0, 2 * X[2] * X[3], X[2] ** 2]),
    # copysign from the bits of two doubles
    "copysign_bits": (r"""
__attribute__((noinline)) double f(const double *x) {
  uint64_t a, b; memcpy(&a, &x[0], 8); memcpy(&b, &x[1], 8);
  uint64_t r = (a & 0x7fffffffffffffffull) | (b & 0x8000000000000000ull);
  double d; memcpy(&d, &r, 8);
  return d * x[2];
}""", [-X[2], 0.0, -abs(X[0]), 0.0]),
    # copysign with a constant magnitude: the magnitude's mask folds into the constant,
    # leaving `(b & SIGN) | C` (fuzz seed 17316)
    "copysign_constant_magnitude": (r"""
__attribute__((noinline)) double f(const double *x) {
  const double c = 0.75;
  uint64_t b, m; memcpy(&b, &x[1], 8); memcpy(&m, &c, 8);
  uint64_t r = (m & 0x7fffffffffffffffull) | (b & 0x8000000000000000ull);
  double d; memcpy(&d, &r, 8);
  return d * x[2] * x[2] + x[0];
}""", [1.0, 0.0, 2 * (0.75 if X[1] >= 0 else -0.75) * X[2], 0.0]),
    # the same on a float's bits
    "float_copysign_constant_magnitude": (r"""
__attribute__((noinline)) double f(const double *x) {
  const float c = 1.5f; float y = (float)(x[3] - 1.0);
  uint32_t b, m; memcpy(&b, &y, 4); memcpy(&m, &c, 4);
  uint32_t r = (m & 0x7fffffffu) | (b & 0x80000000u);
  float d; memcpy(&d, &r, 4);
  return (double)d * x[0];
}""", [(1.5 if X[3] - 1.0 >= 0 else -1.5), 0.0, 0.0, 0.0]),
    # copysign whose sign word is picked on a branch (a phi of `v & SIGN` and 0)
    "copysign_sign_on_branch": (r"""
__attribute__((noinline)) double f(const double *x) {
  uint64_t sg = 0;
  if (x[3] > 0) { uint64_t v; memcpy(&v, &x[1], 8); sg = v & 0x8000000000000000ull; }
  uint64_t m; memcpy(&m, &x[0], 8); m &= 0x7fffffffffffffffull;
  uint64_t r = m | sg; double d; memcpy(&d, &r, 8);
  return d * x[2];
}""", [-X[2], 0.0, -abs(X[0]), 0.0]),
    # fabs of a word a phi merges from a double stored on a branch and the old bytes' load,
    # stored over another element (fuzz-15)
    "fabs_of_merged_word": (WEIGH + r"""
__attribute__((noinline)) double f(const double *x) {
  double *b = malloc(4 * sizeof(double));
  squares(b, x);
  if (x[3] > 0) b[2] = -x[0] * x[1];
  uint64_t w; memcpy(&w, &b[2], 8); w &= 0x7fffffffffffffffull; memcpy(&b[0], &w, 8);
  double s = weigh(b);
  free(b);
  return s;
}""", [-4 * X[1], -4 * X[0] + 4 * X[1], 0.0, 8 * X[3]]),
    # a float's sign flipped through uint32_t
    "float_sign_flip_bits": (r"""
__attribute__((noinline)) static void products(float *fa, const double *x) {
  fa[0] = (float)(x[0] * x[1]); fa[1] = (float)(x[2] * x[3]);
}
__attribute__((noinline)) double f(const double *x) {
  float fa[2]; products(fa, x);
  uint32_t u; memcpy(&u, &fa[1], 4); u ^= 0x80000000u;
  float c; memcpy(&c, &u, 4);
  return (double)c * x[0] + fa[0];
}""", [-X[2] * X[3] + X[1], X[0], -X[3] * X[0], -X[2] * X[0]]),
    # a copied word also reinterpreted as a double, in memory a word-copy helper moves again
    "copy_reinterpreted_and_passed_on": (r"""
__attribute__((noinline)) void copy_words(void *dst, const void *src, int n) {
  for (int i = 0; i < n; i++) { uint64_t w; memcpy(&w, (const char *)src + 8 * i, 8);
                                memcpy((char *)dst + 8 * i, &w, 8); }
}
__attribute__((noinline)) double f(const double *x) {
  double a[4], b[4];
  for (int i = 0; i < 4; i++) a[i] = x[i] * x[i];
  uint64_t w; memcpy(&w, &a[1], 8); memcpy(&a[3], &w, 8);
  double d; memcpy(&d, &w, 8);
  copy_words(b, a + 2, 2);
  return d * x[0] + b[0] + 2 * b[1];
}""", [X[1] ** 2, 2 * X[1] * X[0] + 2 * 2 * X[1], 2 * X[2], 0.0]),
    # a float moved through uint32_t
    "float_through_u32": (r"""
__attribute__((noinline)) double f(const double *x) {
  float a[2]; float b;
  a[0] = (float)x[0]; a[1] = (float)(x[1] * 2);
  { uint32_t w; memcpy(&w, &a[1], 4); memcpy(&b, &w, 4); }
  return (double)b * x[2];
}""", [0.0, 2 * X[2], 2 * X[1], 0.0]),
    # a struct's integer field copied next to its double field: only the double is active
    "struct_int_field_copy": (r"""
struct R { double v; int64_t n; };
__attribute__((noinline)) double f(const double *x) {
  struct R r[2];
  r[0].v = x[0] * x[0]; r[0].n = 3;
  { uint64_t w; memcpy(&w, &r[0].n, 8); memcpy(&r[1].n, &w, 8); }
  { uint64_t w; memcpy(&w, &r[0].v, 8); memcpy(&r[1].v, &w, 8); }
  return r[1].v * (double)r[1].n + x[1];
}""", [6 * X[0], 1.0, 0.0, 0.0]),
    # pointers (with a length) swapped as uint64_t words by a generic helper: the shadow
    # pointers must move with them (was refused: "moves int/pointer data")
    "pointer_words_swapped": (r"""
struct buf { double *p; long n; };
__attribute__((noinline)) static void swap_words(void *a, void *b, size_t n) {
  for (size_t i = 0; i < n / 8; i++) {
    uint64_t t, u;
    memcpy(&t, (char *)a + 8 * i, 8); memcpy(&u, (char *)b + 8 * i, 8);
    memcpy((char *)a + 8 * i, &u, 8); memcpy((char *)b + 8 * i, &t, 8);
  }
}
__attribute__((noinline)) double f(const double *x) {
  double u[4] = {0}, v[4] = {0};
  struct buf A = {u, 4}, B = {v, 4};
  swap_words(&A, &B, sizeof A);
  for (long i = 0; i < A.n; i++) A.p[i] = x[i] * x[i];     /* v = x^2 */
  for (long i = 0; i < B.n; i++) B.p[i] = sin(x[i]);       /* u = sin x */
  return v[0] * u[1] + v[2] * v[3] + u[3];
}""", [2 * X[0] * math.sin(X[1]), X[0] ** 2 * math.cos(X[1]), 2 * X[2] * X[3] ** 2,
       2 * X[2] ** 2 * X[3] + math.cos(X[3])]),
}


def _build_and_run(tmp_path, name: str, level: str) -> list[tuple[float, float]]:
    body, _ = PROGRAMS[name]
    src = tmp_path / f"{name}.c"
    src.write_text(HEAD + body + MAIN)
    exe = tmp_path / name
    flags, extra_env = LEVELS[level]     # adbefore: AD before optimization (SROA's IR, not GVN's)
    r = subprocess.run([ENZYME_BUILD, "cc", *flags, str(src), "-o", str(exe), "-lm"],
                       capture_output=True, text=True, timeout=300, env={**os.environ, **extra_env})
    assert r.returncode == 0, r.stderr
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60, check=True).stdout
    return [tuple(float(v) for v in line.split()) for line in out.splitlines()]


@pytest.mark.parametrize("level", ["O0", "O2", "adbefore"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_float_bytes_moved_through_integers(tmp_path, name, level):
    rows = _build_and_run(tmp_path, name, level)
    expected = PROGRAMS[name][1]
    assert len(rows) == 4
    tol = 1e-6 if "float" in name else 1e-10
    for i, ((rev, fwd), want) in enumerate(zip(rows, expected)):
        assert rev == pytest.approx(want, rel=tol, abs=tol), (i, "reverse", rows)
        assert fwd == pytest.approx(want, rel=tol, abs=tol), (i, "forward", rows)


def test_two_floats_in_one_integer_are_refused_naming_the_load(tmp_path):
    """Eight bytes holding two floats cannot be one differentiable value: a clear refusal,
    not a silent zero."""
    src = tmp_path / "two.c"
    src.write_text(HEAD + r"""
__attribute__((noinline)) double f(const double *x) {
  float a[4];
  for (int i = 0; i < 4; i++) a[i] = (float)x[i];
  { uint64_t w; memcpy(&w, &a[0], 8); memcpy(&a[2], &w, 8); }
  return a[2] * a[3] + a[1];
}""" + MAIN)
    r = subprocess.run([ENZYME_BUILD, "cc", "-O2", str(src), "-o", str(tmp_path / "two"), "-lm"],
                       capture_output=True, text=True, timeout=300)
    if r.returncode == 0:
        # accepted: then the gradient must be right (a2 = x0, a3 = x1)
        out = subprocess.run([str(tmp_path / "two")], capture_output=True, text=True, check=True).stdout
        rows = [tuple(float(v) for v in line.split()) for line in out.splitlines()]
        want = [X[1], X[0] + 1, 0.0, 0.0]
        for (rev, fwd), w in zip(rows, want):
            assert rev == pytest.approx(w, rel=1e-6) and fwd == pytest.approx(w, rel=1e-6), rows
    else:
        assert r.returncode == 1, r.stderr
        assert "Traceback" not in r.stderr
        assert "integer" in r.stderr and "float" in r.stderr and "@f" in r.stderr, r.stderr


# ---------------------------------------------------------------- the analysis on IR

IR = r"""
%struct.R = type { double, i64 }

define void @g(ptr %b, ptr %r) {
entry:
  %b1 = getelementptr inbounds double, ptr %b, i64 1
  %w = load i64, ptr %b1, align 8
  %b3 = getelementptr inbounds i8, ptr %b, i64 24
  store i64 %w, ptr %b3, align 8
  %x = load double, ptr %b, align 8
  store double %x, ptr %b3, align 8
  %n0 = getelementptr inbounds %struct.R, ptr %r, i64 0, i32 1
  %n = load i64, ptr %n0, align 8
  %n1 = getelementptr inbounds %struct.R, ptr %r, i64 1, i32 1
  store i64 %n, ptr %n1, align 8
  %v0 = load double, ptr %r, align 8
  %k = load i64, ptr %n1, align 8
  %k1 = add i64 %k, 1
  br label %loop
loop:
  %p = phi ptr [ %b, %entry ], [ %p.next, %loop ]
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %p.next = getelementptr inbounds double, ptr %p, i64 1
  %i.next = add i64 %i, 1
  %c = icmp eq i64 %i.next, 4
  br i1 %c, label %exit, label %loop
exit:
  ret void
}
"""


def test_memory_types_places_facts_and_copies():
    from enzyme_build.analysis.memtypes import MemoryTypes, Place, may_overlap, print_memory_types
    from enzyme_build.ir.model import parse_module

    module = parse_module(IR)
    fn = module.functions["g"]
    mt = MemoryTypes(module)
    ft = mt.function(fn)
    assert ft.places["%b3"] == {"%b": Place("%b", 24)}
    assert ft.places["%n1"] == {"%r": Place("%r", 24)}
    # the pointer walk: offset 0 modulo 8
    assert ft.places["%p"] == {"%b": Place("%b", 0, 8, lo=0)}   # it only moves up from %b
    kinds = mt.solve(fn)
    assert kinds["%w"] == {"double"}     # b[1] -> b[3]; b[3] also holds a stored double
    assert kinds["%n"] == {"int"}        # r[0].n -> r[1].n; r[1].n is used in arithmetic
    text = print_memory_types(module, fn)
    assert "copy %w: double" in text and "copy %n: int" in text
    assert may_overlap(Place("%b", 0, 8), 8, Place("%b", 24), 8)
    assert not may_overlap(Place("%b", 0, 16), 8, Place("%b", 24), 8)
    assert not may_overlap(Place("%b", 0), 8, Place("%c", 0), 8)
    # lower bounds: a walk from %b+32 up never reaches %b+24; one from %b+16 does
    assert not may_overlap(Place("%b", 0, 8, lo=32), 8, Place("%b", 24), 8)
    assert may_overlap(Place("%b", 0, 8, lo=16), 8, Place("%b", 24), 8)


DEAD_LOAD = r"""
define void @h(ptr %b) {
entry:
  %b1 = getelementptr inbounds double, ptr %b, i64 1
  %w = load i64, ptr %b1, align 8
  %b3 = getelementptr inbounds i8, ptr %b, i64 24
  store i64 %w, ptr %b3, align 8
  %x = load double, ptr %b, align 8
  store double %x, ptr %b3, align 8
  %dead = load i64, ptr %b1, align 8
  ret void
}
"""


def test_a_dead_integer_load_is_no_evidence():
    from enzyme_build.analysis.memtypes import MemoryTypes
    from enzyme_build.ir.model import parse_module

    module = parse_module(DEAD_LOAD)
    fn = module.functions["h"]
    assert MemoryTypes(module).solve(fn)["%w"] == {"double"}
    # the same load used in arithmetic is an integer view of b[1]: then the copy moves an int
    used = DEAD_LOAD.replace("  ret void", "  %u = add i64 %dead, 1\n  ret void")
    module = parse_module(used)
    assert "int" in MemoryTypes(module).solve(module.functions["h"])["%w"]


def test_lower_bounds_of_walks():
    """A walk up (`q++`, GEPs with `nuw`) keeps a lower bound; a walk down (`p--`) loses it at
    once (no bound creeping down one step per fixpoint round)."""
    from enzyme_build.analysis.memtypes import MemoryTypes, Place
    from enzyme_build.ir.model import parse_module
    module = parse_module("""
define void @g(ptr %b, i64 %n) {
entry:
  %e = getelementptr inbounds double, ptr %b, i64 8
  %f = getelementptr inbounds nuw double, ptr %b, i64 %n
  %h = getelementptr inbounds double, ptr %b, i64 %n
  br label %loop
loop:
  %p = phi ptr [ %e, %entry ], [ %p.next, %loop ]
  %q = phi ptr [ %b, %entry ], [ %q.next, %loop ]
  %p.next = getelementptr inbounds double, ptr %p, i64 -1
  %q.next = getelementptr inbounds double, ptr %q, i64 1
  %c = icmp eq ptr %p.next, %b
  br i1 %c, label %exit, label %loop
exit:
  ret void
}
""")
    ft = MemoryTypes(module).function(module.functions["g"])
    assert ft.places["%q"] == {"%b": Place("%b", 0, 8, lo=0)}
    assert ft.places["%p"] == {"%b": Place("%b", 0, 8, lo=None)}
    assert ft.places["%f"] == {"%b": Place("%b", 0, 8, lo=0)}      # nuw: the index is not negative
    assert ft.places["%h"] == {"%b": Place("%b", 0, 8, lo=None)}


def test_declared_types_of_globals_and_allocas_are_evidence():
    """A memcpy from a constant initializer into an untyped buffer: the initializer's type
    (and an alloca's) says what the bytes are (was rev-15, "memcpy of data of unknown type")."""
    from enzyme_build.analysis.memtypes import range_kinds, type_leaves
    from enzyme_build.ir.model import parse_module

    module = parse_module("""
%struct.G = type { double, i32, ptr }
@__const.g = private unnamed_addr constant %struct.G { double 8.000000e-01, i32 1, ptr null }, align 8

define void @h(ptr %out) {
entry:
  %a = alloca [4 x float], align 16
  %b = alloca [24 x i8], align 8
  call void @llvm.memcpy.p0.p0.i64(ptr %b, ptr @__const.g, i64 24, i1 false)
  call void @llvm.memcpy.p0.p0.i64(ptr %out, ptr %a, i64 16, i1 false)
  ret void
}
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
""")
    fn = module.functions["h"]
    assert list(type_leaves(module, "%struct.G")) == [(0, 0, 8, "double"), (8, 0, 4, "int"), (16, 0, 8, "pointer")]
    assert range_kinds(module, fn, ["@__const.g"], 8) == {"double"}
    assert range_kinds(module, fn, ["%a"], 16) == {"float"}
    assert range_kinds(module, fn, ["%b"], 24) == set()      # a byte array says nothing by itself


DEEP = """
%struct.bufs = type { ptr, ptr }

define void @setup(ptr %p) {
entry:
  ret void
}

define void @set_rows(ptr %rows, ptr %u, ptr %w) {
entry:
  store ptr %u, ptr %rows, align 8
  %r1 = getelementptr inbounds ptr, ptr %rows, i64 1
  store ptr %w, ptr %r1, align 8
  ret void
}

define void @fields(ptr %x, i64 %n) {
entry:
  %p = alloca %struct.bufs, align 8
  call void @setup(ptr %p)
  %a = load ptr, ptr %p, align 8
  store double 1.0, ptr %a, align 8
  call void @setup(ptr %p)
  %a2 = load ptr, ptr %p, align 8
  %bf = getelementptr inbounds %struct.bufs, ptr %p, i64 0, i32 1
  %b = load ptr, ptr %bf, align 8
  call void @llvm.memmove.p0.p0.i64(ptr %b, ptr %a2, i64 %n, i1 false)
  ret void
}

define void @rows(i64 %n) {
entry:
  %rows = alloca [2 x ptr], align 8
  %u = alloca [4 x i64], align 8
  %w = alloca [4 x i64], align 8
  call void @set_rows(ptr %rows, ptr %u, ptr %w)
  %wk = getelementptr inbounds double, ptr %w, i64 2
  store double 2.0, ptr %wk, align 8
  call void @copy_rows(ptr %rows, i64 %n)
  ret void
}

define void @copy_rows(ptr %rows, i64 %n) {
entry:
  %s = load ptr, ptr %rows, align 8
  %r1 = getelementptr inbounds ptr, ptr %rows, i64 1
  %d = load ptr, ptr %r1, align 8
  call void @llvm.memmove.p0.p0.i64(ptr %d, ptr %s, i64 %n, i1 false)
  ret void
}

define void @chase(ptr %head) {
entry:
  br label %loop
loop:
  %node = phi ptr [ %head, %entry ], [ %next, %loop ]
  %next = load ptr, ptr %node, align 8
  %stop = icmp eq ptr %next, null
  br i1 %stop, label %exit, label %loop
exit:
  ret void
}
declare void @llvm.memmove.p0.p0.i64(ptr, ptr, i64, i1)
"""


def test_deep_roots_name_the_memory_behind_loaded_pointers():
    """Two loads of the same field (before and after an opaque call) share a deep root, so
    a store through one types a copy through the other; a pointer stored into an array in
    one function links that array's deep root to the pointer's memory, so a copy through
    `rows[1]` in another function is typed by the caller's store into `w`; a pointer chase
    stops making names after two levels."""
    from enzyme_build.analysis.memtypes import MemoryTypes, Place, print_memory_types, range_kinds
    from enzyme_build.ir.model import parse_module

    module = parse_module(DEEP)
    fields = module.functions["fields"]
    ft = MemoryTypes.of(module).function(fields)
    assert ft.places["%a"]["*%p+0"] == Place("*%p+0", 0)
    assert ft.places["%a2"]["*%p+0"] == Place("*%p+0", 0)
    assert ft.places["%b"]["*%p+8"] == Place("*%p+8", 0)
    assert range_kinds(module, fields, ["%a2"], None) == {"double"}
    assert range_kinds(module, fields, ["%b"], None) == set()     # nothing is known of p->b

    copy_rows = module.functions["copy_rows"]
    # an array of pointers: `rows[0]` and `rows[1]` are fields at offsets 0 and 8
    cft = MemoryTypes.of(module).function(copy_rows)
    assert "*%rows+8" in cft.places["%d"]
    assert range_kinds(module, copy_rows, ["%d"], None) == {"double"}   # w[2] = 2.0 in @rows
    assert range_kinds(module, copy_rows, ["%s"], None) == set()        # u: only integers declared
    text = print_memory_types(module, module.functions["set_rows"])
    assert "link *%rows+8 = %w+0" in text

    chase = MemoryTypes.of(module).function(module.functions["chase"])
    assert max(r.count("*") for r in chase.places["%next"]) == 2


def test_byte_copy_loop_is_right_optimized_and_before_optimization(tmp_path):
    """A char-by-char copy of doubles: after the pre-AD pipeline it is a memcpy of doubles
    (right gradient); with AD before optimization the stage turns it into a memcpy too
    (ad/bytecopies.py; it was a refusal, before that a silent zero: rev-24). A byte loop
    that cannot become a memcpy stays a refusal naming the copy
    (tests/ad/test_memory_idioms.py::test_overlapping_byte_copy_stays_a_clear_error)."""
    body = r"""
static void bytecopy(void *dst, const void *src, size_t len) {
  char *d = dst; const char *s = src;
  for (size_t i = 0; i < len; i++) d[i] = s[i];
}
__attribute__((noinline)) double f(const double *x) {
  double v[4], w[4];
  for (int i = 0; i < 4; i++) v[i] = x[i] * x[i];
  bytecopy(w, v, sizeof v);
  double s = 0;
  for (int i = 0; i < 4; i++) s += w[i] * (i + 1);
  return s;
}"""
    src = tmp_path / "bytes.c"
    src.write_text(HEAD + body + MAIN)
    exe = tmp_path / "bytes"
    r = subprocess.run([ENZYME_BUILD, "cc", "-O2", str(src), "-o", str(exe), "-lm"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    for i, line in enumerate(out.splitlines()):
        rev, fwd = (float(v) for v in line.split())
        assert rev == pytest.approx(2 * X[i] * (i + 1)) and fwd == pytest.approx(2 * X[i] * (i + 1))
    env = dict(os.environ, ENZYME_BUILD_AD_BEFORE_OPT="1")
    r = subprocess.run([ENZYME_BUILD, "cc", "-O2", str(src), "-o", str(exe) + "2", "-lm"],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr
    out = subprocess.run([str(exe) + "2"], capture_output=True, text=True, check=True).stdout
    for i, line in enumerate(out.splitlines()):
        rev, fwd = (float(v) for v in line.split())
        assert rev == pytest.approx(2 * X[i] * (i + 1)) and fwd == pytest.approx(2 * X[i] * (i + 1))


CALL_CHAIN = r"""
define void @leaf(ptr %p) {
entry:
  store double 1.0, ptr %p, align 8
  ret void
}
define void @mid(ptr %q) {
entry:
  call void @leaf(ptr %q)
  ret void
}
define void @top(ptr %r) {
entry:
  call void @mid(ptr %r)
  %w = load i64, ptr %r, align 8
  %r1 = getelementptr inbounds i8, ptr %r, i64 8
  store i64 %w, ptr %r1, align 8
  ret void
}
"""


def test_facts_of_a_function_are_computed_once_per_question():
    """`facts_for` answers the same (function, depth, path) question from its memo: the facts
    reached through callers and callees are gathered once (they were stored under the wrong
    key and gathered again at every question, along every path of a deep call chain)."""
    from enzyme_build.analysis.memtypes import MemoryTypes
    from enzyme_build.ir.model import parse_module

    module = parse_module(CALL_CHAIN)
    mt = MemoryTypes(module)
    top = module.functions["top"]
    first = mt.facts_for(top)
    assert any(f.kind == "double" for f in first), first   # @leaf's store, seen through @mid
    calls = []
    inner = mt._facts_for
    mt._facts_for = lambda *args: calls.append(args) or inner(*args)
    assert mt.facts_for(top) is first
    assert calls == []
    assert mt.solve(top)["%w"] == {"double"}
