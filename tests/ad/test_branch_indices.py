"""Which way a join was entered, read again from the branch that decided it.

The reverse sweep of a block with two predecessors must know which one control came from.
The forward sweep records it (a `pidx` phi) and the cache planner used to keep that index
like any value: a tape cell per execution of the join, per iteration in loops. When one
branch decides the way in (`deciding_branch` in analysis/cfg.py: a diamond, an `if` without
`else`, the guard in front of an inner loop that may run zero times) and its condition costs
nothing to obtain again in the reverse sweep (an IV test, a comparison of arguments, a
re-read load), the index is now `select(cond, a, b)` instead of a cell.

The class: branches inside loops whose condition the reverse sweep can recompute, and the
rotated `for` loops nested in other loops (`for (j = i + 1; j < n; j++)`, ADBench's packed
triangles, CSR rows). Members below: a data-dependent `if` without `else` in a loop, an
`if`/`else` diamond in a loop, triangular inner loops that run zero times for the last row,
a loop-invariant (hoisted) condition, and a condition read from memory the loop overwrites
later (that one must still be kept: its index stays a tape cell). Each is compiled at -O0,
-O2 and with AD before optimization and checked against forward mode and central
differences; the IR tests check that the index is recomputed (and kept when it must be),
and LLVM verifies every output.
"""
from __future__ import annotations

import re

import pytest

from enzyme_build import llvm
from enzyme_build.ad.driver import differentiate_module
from ad_helpers import LEVELS, check_program_gradient, function_block, function_body

# ------------------------------------------------------------------ IR level

DECLS = """
@enzyme_dup = external global i32
@enzyme_const = external global i32
declare double @llvm.sin.f64(double)
declare double @llvm.cos.f64(double)
declare void @__enzyme_autodiff(ptr, ...)
"""

# s += sin(x[i] * s) only where x[i] > 0: the join `latch` is entered from `loop` (skipped)
# or `then`; the condition is a comparison of a re-read of the unwritten argument
IF_IN_LOOP = """
define double @f(ptr %x, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %latch ]
  %s = phi double [ 0.5, %entry ], [ %s.next, %latch ]
  %p = getelementptr inbounds double, ptr %x, i64 %i
  %v = load double, ptr %p, align 8
  %pos = fcmp ogt double %v, 0.0
  br i1 %pos, label %then, label %latch
then:
  %m = fmul double %v, %s
  %sn = call double @llvm.sin.f64(double %m)
  %t = fadd double %s, %sn
  br label %latch
latch:
  %s.next = phi double [ %t, %then ], [ %s, %loop ]
  %i.next = add nuw nsw i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret double %s.next
}

define void @g(ptr %x, ptr %dx, i64 %n) {
entry:
  call void (ptr, ...) @__enzyme_autodiff(ptr @f, ptr @enzyme_dup, ptr %x, ptr %dx, ptr @enzyme_const, i64 %n)
  ret void
}
"""


def _differentiated(module: str) -> str:
    out = differentiate_module(module + DECLS)
    llvm.verify(llvm.parse_assembly(out, "branch_indices"), generated=True)
    return function_body(out, "diffe_f")


def test_the_join_of_an_if_in_a_loop_reads_its_way_in_from_the_condition():
    fn = _differentiated(IF_IN_LOOP)
    rev = function_block(fn, "rev$latch")
    # the reverse of the join re-reads x[i], compares it again and switches on the select
    m = re.search(r"(%rc\$\d+) = select i1 (%\S+), i32 (\d), i32 (\d)", rev)
    assert m, rev
    assert re.search(rf"{re.escape(m.group(2))} = fcmp ogt double %\S+, 0\.0", fn), fn
    assert re.search(rf"switch i32 {re.escape(m.group(1))},", rev)
    # true means `then`: its index among the join's predecessors (then, loop in the header
    # line's order of first edges) is what the select yields
    preds = re.search(r"%pidx\$\d+ = phi i32 \[ (\d), %(\S+) \], \[ (\d), %(\S+) \]", function_block(fn, "latch"))
    index = {preds.group(2): preds.group(1), preds.group(4): preds.group(3)}
    assert (m.group(3), m.group(4)) == (index["then"], index["loop"])
    # nothing of the index is kept: the loop's record holds sin's operand and s only
    assert "%pidx" not in re.sub(r"%pidx\$\d+ = phi[^\n]*", "", function_block(fn, "latch"))


def test_a_condition_the_reverse_sweep_cannot_recompute_keeps_the_index():
    # the same loop, but x[i] is overwritten after it is tested: the condition is not
    # costless any more, so the index is kept (as before) and the gradient stays right
    overwritten = IF_IN_LOOP.replace(
        "  %i.next = add nuw nsw i64 %i, 1\n",
        "  store double %s.next, ptr %p, align 8\n  %i.next = add nuw nsw i64 %i, 1\n", 1)
    fn = _differentiated(overwritten)
    rev = function_block(fn, "rev$latch")
    assert not re.search(r"select i1 %\S+, i32 \d, i32 \d", rev), rev
    assert re.search(r"switch i32 %r\$\d+,", rev)   # a value read from the tape


# ------------------------------------------------------------------ compiled programs

PROGRAMS = {
    # an `if` without `else` in a loop, its condition from the (unwritten) input
    "if_in_loop": r"""
double f(const double *x) {
  double s = 0.5;
  for (int k = 0; k < 3; k++)
    for (int i = 0; i < 4; i++)
      if (x[i] > 0.0) s += sin(x[i] * s + k);
  return s;
}
""",
    # an if/else diamond in a loop
    "diamond_in_loop": r"""
double f(const double *x) {
  double s = 0.25;
  for (int i = 0; i < 4; i++) {
    double t = x[i] * s;
    if (t > x[(i + 1) % 4]) s = s + cos(t);
    else s = s * 0.5 + t * t;
  }
  return s;
}
""",
    # ADBench's packed triangle: the inner loop runs zero times for the last row (the
    # guard in front of it joins the skipped path), the packed index carried across rows
    "triangle": r"""
__attribute__((noinline)) static void qtimesx(int d, const double *l, const double *x, double *out) {
  for (int i = 0; i < d; i++) out[i] = x[i];
  int idx = 0;
  for (int i = 0; i < d; i++)
    for (int j = i + 1; j < d; j++) out[j] += l[idx++] * x[i];
}
double f(const double *x) {
  double l[6], out[4], s = 0;
  for (int k = 0; k < 6; k++) l[k] = 0.3 * x[k % 4] - 0.1 * k;
  for (int r = 0; r < 3; r++) {
    qtimesx(4, l, x, out);
    for (int i = 0; i < 4; i++) s += sin(out[i] + r);
  }
  return s;
}
""",
    # a condition that does not change in the loop (hoisted out of it by the optimizer)
    "invariant_condition": r"""
double f(const double *x) {
  double s = 0.1, e = x[0] * x[1];
  for (int i = 0; i < 8; i++) {
    if (e > 0.1) s = s * x[i % 4] + sin(s);
    s += x[(i + 1) % 4] * 0.25;
  }
  return s;
}
""",
    # the condition is read from a scratch array the loop overwrites later: its index has
    # to be kept (tape), and still comes out right
    "overwritten_condition": r"""
double f(const double *x) {
  double u[4];
  for (int i = 0; i < 4; i++) u[i] = x[i];
  double s = 0.3;
  for (int k = 0; k < 3; k++)
    for (int i = 0; i < 4; i++) {
      if (u[i] > 0.2) s += sin(u[i] * s);
      u[i] = u[i] * 0.9 + s * 0.1;
    }
  return s + u[2];
}
""",
}


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_programs_with_joins_get_the_right_gradient(name, level, tmp_path):
    check_program_gradient(tmp_path, PROGRAMS[name], level)
