"""A second induction variable beside a loop's counting one: its last value is computed.

The reverse sweep replays every IV of a counted loop from the value it had in the last
iteration. For the counting IV that value follows from the count's end; a second IV
stepping beside it (`phi [start, outside], [iv + c, latch]`: ADBench's packed triangle
index `l[idx++]` beside `j`, an output cursor `out[pos++]`, a counter going up while the
loop counts down) used to be captured on the loop's exit and kept on the tape once per
execution of the loop, per iteration of the loops around it. It is now its start plus
`c` times the steps the counting IV took (`CachePlanner.iv_on_exit`), both read on the
exit edge where the reverse sweep enters the loop.

Members: the packed triangle (the second IV's start carried across rows), an output cursor
advancing by two, a loop counting down with a counter going up, and a second IV narrower
than the counting one (i32 beside i64, left to the capture on the exit). Each is checked
against forward mode and central differences at -O0, -O2 and with AD before optimization;
the IR test checks that no exit value is captured and LLVM verifies the output.
"""
from __future__ import annotations

import pytest

from enzyme_build import llvm
from enzyme_build.ad.driver import differentiate_module
from ad_helpers import LEVELS, check_program_gradient, function_body

DECLS = """
@enzyme_dup = external global i32
@enzyme_const = external global i32
declare double @llvm.sin.f64(double)
declare void @__enzyme_autodiff(ptr, ...)
"""

# for (j = first; j != n; j++) s = sin(s + x[j] * l[k++]): k steps beside j from `kstart`
BESIDE = """
define double @f(ptr %x, ptr %l, i64 %first, i64 %kstart, i64 %n) {
entry:
  br label %loop
loop:
  %j = phi i64 [ %first, %entry ], [ %j.next, %loop ]
  %k = phi i64 [ %kstart, %entry ], [ %k.next, %loop ]
  %s = phi double [ 0.5, %entry ], [ %s.next, %loop ]
  %px = getelementptr inbounds double, ptr %x, i64 %j
  %vx = load double, ptr %px, align 8
  %pl = getelementptr inbounds double, ptr %l, i64 %k
  %vl = load double, ptr %pl, align 8
  %m = fmul double %vx, %vl
  %a = fadd double %s, %m
  %s.next = call double @llvm.sin.f64(double %a)
  %j.next = add nuw nsw i64 %j, 1
  %k.next = add nsw i64 %k, 1
  %done = icmp eq i64 %j.next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret double %s.next
}

define void @g(ptr %x, ptr %dx, ptr %l, ptr %dl, i64 %first, i64 %kstart, i64 %n) {
entry:
  call void (ptr, ...) @__enzyme_autodiff(ptr @f, ptr @enzyme_dup, ptr %x, ptr %dx, ptr @enzyme_dup, ptr %l, ptr %dl, ptr @enzyme_const, i64 %first, ptr @enzyme_const, i64 %kstart, ptr @enzyme_const, i64 %n)
  ret void
}
"""


def test_a_second_iv_is_replayed_from_its_start_and_the_steps_taken():
    out = differentiate_module(BESIDE + DECLS)
    llvm.verify(llvm.parse_assembly(out, "second_ivs"), generated=True)
    fn = function_body(out, "diffe_f")
    # nothing captured on the exit: k's last value is kstart + (j's last - first)
    assert "%ivexit" not in fn
    assert "sub i64" in fn and "%k$ivslot" in fn


PROGRAMS = {
    # ADBench's packed lower triangle: idx runs on across rows, the inner loop starts at i + 1
    "packed_triangle": r"""
__attribute__((noinline)) static double tri(int d, const double *l, const double *x) {
  double out[4] = {0}, s = 0;
  int idx = 0;
  for (int i = 0; i < d; i++)
    for (int j = i + 1; j < d; j++) out[j] += l[idx++] * sin(x[i] * out[i] + 0.5);
  for (int i = 0; i < d; i++) s += out[i] * out[i];
  return s;
}
double f(const double *x) {
  double l[6], s = 0;
  for (int k = 0; k < 6; k++) l[k] = 0.7 * x[(k + 1) % 4] - 0.2 * k;
  for (int r = 0; r < 3; r++) s += tri(4, l, x) * (r + 1) + x[r];
  return s;
}
""",
    # an output cursor advancing by two per iteration, the loop's count from the input
    "cursor_by_two": r"""
double f(const double *x) {
  double buf[16];
  int pos = 1, n = 3 + (x[0] > 0);
  for (int i = 0; i < n; i++) {
    buf[pos] = sin(x[i % 4] * (i + 1));
    buf[pos + 1] = buf[pos] * x[(i + 2) % 4];
    pos += 2;
  }
  double s = 0;
  for (int k = 1; k < pos; k++) s += buf[k] * buf[k] + x[k % 4] * buf[k];
  return s;
}
""",
    # counting down with a counter going up
    "down_and_up": r"""
double f(const double *x) {
  double s = 0.3;
  for (int r = 0; r < 2; r++) {
    int up = r;
    for (int i = 3; i >= 0; i--) {
      s = sin(s * x[i] + x[up % 4]);
      up += 1;
    }
  }
  return s;
}
""",
    # the second IV narrower than the counting one
    "narrow_second": r"""
double f(const double *x) {
  double s = 0.2;
  for (long i = 0; i < 4; i++) {
    int k = (int)i;
    for (long j = i; j < 4; j++) {
      s += sin(x[j] * s) * x[k % 4];
      k += 3;
    }
  }
  return s;
}
""",
}


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_programs_with_second_ivs_get_the_right_gradient(name, level, tmp_path):
    check_program_gradient(tmp_path, PROGRAMS[name], level)
