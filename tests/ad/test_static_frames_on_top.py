"""A static record's offset found again at the top of the tape, not kept.

A loop whose trip count is known when it starts keeps its values in one tape record (a
frame reserved in its preheader, `static.off$N`), which the reverse sweep addresses by the
frame's offset. Inside an outer loop that offset differs per outer iteration, and it used
to be kept in the outer loop's record: 8 bytes per execution of the inner loop (three per
(point, component) pair in GMM). The tape is a stack: whatever the forward sweep pushed
after the frame is popped before the reverse sweep enters the loop, so when nothing inside
the loop can push (no subloop, no call but intrinsics and math functions, values from
outside read from hoisted slots: `CachePlanner.frame_on_top`) the frame is the top and its
offset is the tape's size minus the record's bytes (`__enzyme_build_tape_below_top`).

The class: counted inner loops in outer loops, with more tape traffic after them in the
same outer iteration. Members: a loop of unknown length pushing per iteration after the
inner loop, an active noinline callee handed the tape after it, two inner loops in a row,
a noinline helper holding the nested loops (its split pieces, with the caller's records
pushed between them), and an inner loop holding a call (which keeps its offset). Each is
compiled at -O0, -O2 and with AD before optimization and checked against forward mode and
central differences; the IR tests check which offsets are kept, and LLVM verifies them.
"""
from __future__ import annotations

import re

import pytest

from enzyme_build import llvm
from enzyme_build.ad.cache import listening_to_plans
from enzyme_build.ad.driver import differentiate_module
from ad_helpers import LEVELS, check_program_gradient, function_body

DECLS = """
@enzyme_dup = external global i32
@enzyme_const = external global i32
declare double @llvm.sin.f64(double)
define double @ext(double %v) noinline {
entry:
  %m = fmul double %v, %v
  %c = call double @llvm.sin.f64(double %m)
  ret double %c
}
declare void @__enzyme_autodiff(ptr, ...)
"""

# for r < m: for j < n: s = sin(s * x[j]) -- the inner loop keeps s and sin's operand per iteration
NESTED = """
define double @f(ptr %x, i64 %n, i64 %m) {
entry:
  br label %outer
outer:
  %r = phi i64 [ 0, %entry ], [ %r.next, %outer.latch ]
  %s0 = phi double [ 0.5, %entry ], [ %s.last, %outer.latch ]
  br label %inner
inner:
  %j = phi i64 [ 0, %outer ], [ %j.next, %inner ]
  %s = phi double [ %s0, %outer ], [ %s.next, %inner ]
  %p = getelementptr inbounds double, ptr %x, i64 %j
  %v = load double, ptr %p, align 8
  %a = fmul double %s, %v
  %s.next = CALL(double %a)
  %j.next = add nuw nsw i64 %j, 1
  %jd = icmp eq i64 %j.next, %n
  br i1 %jd, label %outer.latch, label %inner
outer.latch:
  %s.last = phi double [ %s.next, %inner ]
  %r.next = add nuw nsw i64 %r, 1
  %rd = icmp eq i64 %r.next, %m
  br i1 %rd, label %exit, label %outer
exit:
  ret double %s.last
}

define void @g(ptr %x, ptr %dx, i64 %n, i64 %m) {
entry:
  call void (ptr, ...) @__enzyme_autodiff(ptr @f, ptr @enzyme_dup, ptr %x, ptr %dx, ptr @enzyme_const, i64 %n, ptr @enzyme_const, i64 %m)
  ret void
}
"""


def _plan(callee: str) -> tuple[str, str]:
    plans: list[str] = []
    with listening_to_plans(plans.append):
        out = differentiate_module(NESTED.replace("CALL", f"call double {callee}") + DECLS)
    llvm.verify(llvm.parse_assembly(out, "frames"), generated=True)
    return "\n".join(plans), function_body(out, "diffe_f")


def test_an_inner_loop_finds_its_record_at_the_top_of_the_tape():
    plan, fn = _plan("@llvm.sin.f64")
    assert re.search(r"static record of loop %inner: 16 B per iteration of loop \(%a, %s\)", plan), plan
    assert "static.off" not in "".join(line for line in plan.splitlines() if "kept" in line), plan
    assert re.search(r"call i64 @__enzyme_build_tape_below_top\(ptr %tape\$, i64 %tb\$\d+\)", fn)


def test_an_inner_loop_with_a_call_keeps_its_offset():
    # a derived callee is handed the tape (and any call but a math function could be): the
    # offset stays kept
    plan, fn = _plan("@ext")
    assert re.search(r"%static\.off\$\d+\s+sweep value\s+kept", plan), plan
    assert "tape_below_top" not in fn


PROGRAMS = {
    # a loop of unknown length pushing per iteration after the counted inner loop
    "then_pushes": r"""
double f(const double *x) {
  double s = 0.4;
  int n = 3 + (x[0] > -10.0);   /* 4, known only when the loop starts: not unrolled */
  for (int r = 0; r < 3; r++) {
    for (int j = 0; j < n; j++) s = sin(s * x[j] + r);
    double t = s;
    while (t < 3.0) t = t * 1.5 + cos(x[r] * t) + 0.5;
    s = s + 0.1 * t;
  }
  return s;
}
""",
    # an active callee, handed the tape, after the inner loop
    "then_callee": r"""
__attribute__((noinline)) static double twist(const double *x, double s, int r) {
  double t = s;
  for (int k = 0; k <= r; k++) t = sin(t * x[(k + 1) % 4]) + t * 0.25;
  return t;
}
double f(const double *x) {
  double s = 0.3;
  int n = 3 + (x[0] > -10.0);
  for (int r = 0; r < 3; r++) {
    for (int j = 0; j < n; j++) s = cos(s * x[j]) + s * 0.5;
    s = twist(x, s, r);
  }
  return s;
}
""",
    # two counted inner loops in a row
    "two_inner": r"""
double f(const double *x) {
  double s = 0.2, u[4];
  int n = 3 + (x[0] > -10.0);
  for (int r = 0; r < 3; r++) {
    for (int j = 0; j < n; j++) u[j] = sin(x[j] * (s + r));
    for (int j = 0; j < n; j++) s = s * 0.7 + u[j] * u[(j + 1) % 4];
  }
  return s;
}
""",
    # the nested loops in a noinline helper: its split pieces, records of the caller between
    "helper_nest": r"""
__attribute__((noinline)) static double nest(const double *x, double s) {
  int n = 3 + (x[0] > -10.0);
  for (int r = 0; r < 2; r++)
    for (int j = 0; j < n; j++) s = sin(s * x[j]) + 0.3 * s;
  return s;
}
double f(const double *x) {
  double s = 0.6;
  for (int k = 0; k < 3; k++) {
    s = nest(x, s);
    double t = s;
    while (t < 2.0) t = t * 1.7 + x[k] * x[k] + 0.3;
    s = s * 0.5 + 0.05 * t;
  }
  return s;
}
""",
}


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_programs_with_inner_records_get_the_right_gradient(name, level, tmp_path):
    check_program_gradient(tmp_path, PROGRAMS[name], level)
