"""Iteration counts of loops whose exit test is not the canonical `iv.next == bound`: loops that
go on while `iv.next < bound` (a do-while, or an exit LLVM's induction-variable pass left as
it was), `!=` tests, swapped operands, and the shapes that must stay uncounted."""
from __future__ import annotations

import pytest

from enzyme_build.analysis.cfg import analyze_cfg, print_cfg
from enzyme_build.ir import parse_module

# one loop; TEST is the latch's comparison and BRANCH its branch (exit or loop first)
LOOP = """
define double @f(ptr %x, i64 %n, i32 %m, i64 %first) {
entry:
  br label %loop
loop:
  %iv = phi ITY [ START, %entry ], [ %iv.next, %loop ]
  %s = phi double [ 0.000000e+00, %entry ], [ %s.next, %loop ]
  %w = zext ITY %iv to i64
  %p = getelementptr inbounds double, ptr %x, i64 %w
  %v = load double, ptr %p, align 8
  %s.next = fadd double %s, %v
  %iv.next = add FLAGS ITY %iv, STEP
  %c = TEST
  BRANCH
exit:
  ret double %s.next
}
"""


def loop_of(test, branch="br i1 %c, label %loop, label %exit", ity="i64", start="0", flags="nuw nsw",
            step="1"):
    text = (LOOP.replace("TEST", test).replace("BRANCH", branch).replace("ITY", ity)
            .replace("START", start).replace("FLAGS", flags).replace("STEP", step))
    if ity == "i64":
        text = text.replace("%w = zext i64 %iv to i64", "%w = add i64 %iv, 0")
    fn = parse_module(text).functions["f"]
    return fn, analyze_cfg(fn).loops[0]


@pytest.mark.parametrize("test, branch", [
    ("icmp slt i64 %iv.next, %n", "br i1 %c, label %loop, label %exit"),    # do { } while (++i < n)
    ("icmp sge i64 %iv.next, %n", "br i1 %c, label %exit, label %loop"),    # the same, exit first
    ("icmp sgt i64 %n, %iv.next", "br i1 %c, label %loop, label %exit"),    # operands swapped
    ("icmp sle i64 %n, %iv.next", "br i1 %c, label %exit, label %loop"),
])
def test_signed_less_than_exit_counts_at_least_one_iteration(test, branch):
    fn, loop = loop_of(test, branch)
    assert loop.trip_count is None
    assert (loop.iv, loop.start, loop.bound, loop.clamp) == ("%iv", None, "%n", "smax")
    assert "count=smax(%n, 1)" in print_cfg(fn)


@pytest.mark.parametrize("test, branch", [
    ("icmp ult i32 %iv.next, %m", "br i1 %c, label %loop, label %exit"),
    ("icmp uge i32 %iv.next, %m", "br i1 %c, label %exit, label %loop"),
    ("icmp ugt i32 %m, %iv.next", "br i1 %c, label %loop, label %exit"),
])
def test_unsigned_less_than_exit_of_a_narrow_iv(test, branch):
    _, loop = loop_of(test, branch, ity="i32")
    assert (loop.trip_count, loop.iv, loop.start, loop.bound, loop.clamp) == (None, "%iv", None, "%m", "umax")


def test_not_equal_test_that_stays_in_the_loop_is_the_canonical_count():
    _, loop = loop_of("icmp ne i64 %iv.next, %n")
    assert (loop.trip_count, loop.iv, loop.clamp) == ("%n", "%iv", None)
    _, loop = loop_of("icmp eq i64 %n, %iv.next", "br i1 %c, label %exit, label %loop")
    assert (loop.trip_count, loop.iv, loop.clamp) == ("%n", "%iv", None)


def test_start_other_than_zero_needs_the_no_wrap_flag_of_its_comparison():
    fn, loop = loop_of("icmp slt i64 %iv.next, %n", start="%first", flags="nsw")
    assert (loop.start, loop.bound, loop.clamp) == ("%first", "%n", "smax")
    assert "count=smax(%n, %first + 1) - %first" in print_cfg(fn)
    _, loop = loop_of("icmp ult i64 %iv.next, %n", start="%first", flags="nuw")
    assert (loop.start, loop.clamp) == ("%first", "umax")
    # iv + 1 may wrap: the count formula would not hold for the largest start
    for test, flags in (("icmp slt i64 %iv.next, %n", "nuw"), ("icmp ult i64 %iv.next, %n", "nsw"),
                        ("icmp ult i64 %iv.next, %n", "")):
        _, loop = loop_of(test, start="%first", flags=flags)
        assert loop.bound is None and loop.clamp is None, (test, flags)


def test_loop_testing_the_phi_itself_counts_one_more():
    """`for (j = 1; j <= p; j++)` as O2 leaves it: the latch leaves when the phi (not its
    increment) equals the bound, or goes on while it is below the bound."""
    fn, loop = loop_of("icmp eq i64 %iv, %n", "br i1 %c, label %exit, label %loop", start="%first")
    assert (loop.trip_count, loop.start, loop.bound, loop.step, loop.tested, loop.clamp) == \
        (None, "%first", "%n", 1, "iv", None)
    assert "count=%n - %first + 1" in print_cfg(fn)
    fn, loop = loop_of("icmp ult i64 %iv, %n", flags="")    # no flag needed: iv < n, so iv + 1 <= n
    assert (loop.start, loop.tested, loop.clamp) == (None, "iv", "umax")
    assert "count=umax(%n, 0) + 1" in print_cfg(fn)


@pytest.mark.parametrize("test, branch, flags, clamp, tested", [
    ("icmp eq i64 %iv.next, %n", "br i1 %c, label %exit, label %loop", "", None, "next"),
    ("icmp sgt i64 %iv.next, %n", "br i1 %c, label %loop, label %exit", "nsw", "smin", "next"),
    ("icmp ugt i64 %iv, %n", "br i1 %c, label %loop, label %exit", "", "umin", "iv"),  # O2's k >= 0 loop
    ("icmp sle i64 %iv, %n", "br i1 %c, label %exit, label %loop", "", "smin", "iv"),
])
def test_loop_counting_down(test, branch, flags, clamp, tested):
    _, loop = loop_of(test, branch, start="%first", flags=flags, step="-1")
    assert (loop.trip_count, loop.iv, loop.start, loop.bound, loop.step, loop.tested, loop.clamp) == \
        (None, "%iv", "%first", "%n", -1, tested, clamp)


@pytest.mark.parametrize("test, branch, flags", [
    ("icmp ugt i64 %iv.next, %n", "br i1 %c, label %loop, label %exit", "nuw"),  # an unsigned count down may wrap
    ("icmp sgt i64 %iv.next, %n", "br i1 %c, label %loop, label %exit", ""),     # so may a signed one without nsw
    ("icmp slt i64 %iv.next, %n", "br i1 %c, label %loop, label %exit", "nsw"),  # counts down past n
])
def test_count_down_shapes_that_stay_uncounted(test, branch, flags):
    _, loop = loop_of(test, branch, start="%first", flags=flags, step="-1")
    assert loop.bound is None and loop.clamp is None


def test_loop_stepping_by_a_constant_other_than_one():
    """`for (i = 0; i < n; i += 2)`, a stride-3 count down: the count rounds up; the IV's
    increment must not wrap (its flag), whatever is tested."""
    fn, loop = loop_of("icmp ult i64 %iv.next, %n", step="2", flags="nuw")
    assert (loop.start, loop.bound, loop.step, loop.tested, loop.clamp) == (None, "%n", 2, "next", "umax")
    assert "count=ceil((umax(%n, 2)) / 2)" in print_cfg(fn)
    fn, loop = loop_of("icmp sgt i64 %iv, %n", start="%first", step="-3", flags="nsw")
    assert (loop.start, loop.step, loop.tested, loop.clamp) == ("%first", -3, "iv", "smin")
    assert "count=ceil((%first - smin(%n, %first)) / 3) + 1" in print_cfg(fn)
    _, loop = loop_of("icmp eq i64 %iv.next, %n", branch="br i1 %c, label %exit, label %loop", step="4", flags="")
    assert (loop.trip_count, loop.step, loop.clamp) == (None, 4, None)
    _, loop = loop_of("icmp ult i64 %iv, %n", step="2", flags="nsw")   # i + 2 may wrap unsigned
    assert loop.bound is None


@pytest.mark.parametrize("test, branch, step", [
    ("icmp sle i64 %iv.next, %n", "br i1 %c, label %loop, label %exit", "1"),   # while (++i <= n)
    ("icmp slt i64 %iv.next, %n", "br i1 %c, label %loop, label %exit", "0"),   # no step
    ("icmp sgt i64 %iv.next, %n", "br i1 %c, label %loop, label %exit", "1"),   # counts up past n
    ("icmp slt i64 %iv.next, %n", "br i1 %c, label %exit, label %loop", "1"),   # leaves at once
])
def test_other_exit_tests_have_no_count(test, branch, step):
    _, loop = loop_of(test, branch, step=step)
    assert loop.trip_count is None and loop.bound is None and loop.clamp is None


def test_bound_computed_in_the_loop_or_back_edge_not_the_increment_has_no_count():
    text = LOOP.replace("ITY", "i64").replace("START", "0").replace("FLAGS", "nsw").replace("STEP", "1")
    text = text.replace("%w = zext i64 %iv to i64", "%w = add i64 %iv, 0")
    inside = text.replace("TEST", "icmp slt i64 %iv.next, %w").replace("BRANCH", "br i1 %c, label %loop, label %exit")
    assert analyze_cfg(parse_module(inside).functions["f"]).loops[0].bound is None
    # the phi steps by 2 while the test looks at iv + 1
    other = (text.replace("TEST", "icmp slt i64 %iv.next, %n").replace("BRANCH", "br i1 %c, label %loop, label %exit")
             .replace("[ %iv.next, %loop ]", "[ %iv.two, %loop ]")
             .replace("%c = icmp", "%iv.two = add nsw i64 %iv, 2\n  %c = icmp"))
    loop = analyze_cfg(parse_module(other).functions["f"]).loops[0]
    assert loop.trip_count is None and loop.bound is None
    canonical = other.replace("icmp slt i64 %iv.next, %n", "icmp eq i64 %iv.next, %n") \
        .replace("br i1 %c, label %loop, label %exit", "br i1 %c, label %exit, label %loop")
    assert analyze_cfg(parse_module(canonical).functions["f"]).loops[0].trip_count is None
