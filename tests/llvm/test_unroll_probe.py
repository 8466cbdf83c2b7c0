"""`llvm.unrolls_fully`: whether the second pre-AD pipeline (complete unrolling of small
constant-count loops) has work. The AD stage skips that O2 run when it has none."""
from __future__ import annotations

import pytest

from enzyme_build import llvm

LOOP = """
define double @sum(ptr %p) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %n, %loop ]
  %s = phi double [ 0.0, %entry ], [ %s2, %loop ]
  %q = getelementptr double, ptr %p, i64 %i
  %v = load double, ptr %q
  %s2 = fadd double %s, %v
  %n = add i64 %i, 1
  %c = icmp eq i64 %n, COUNT
  br i1 %c, label %out, label %loop
out:
  ret double %s2
}
"""

# a loop nest in LLVM's canonical form already (LCSSA phi, dedicated exit), as the
# first pre-AD run may leave one: the canonicalization alone must not count as unrolling
RUNTIME_COUNT = """
define double @dot(ptr %a, ptr %b, i64 %n) {
entry:
  %empty = icmp eq i64 %n, 0
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %s = phi double [ 0.0, %entry ], [ %s1, %loop ]
  %pa = getelementptr double, ptr %a, i64 %i
  %pb = getelementptr double, ptr %b, i64 %i
  %x = load double, ptr %pa
  %y = load double, ptr %pb
  %m = fmul double %x, %y
  %s1 = fadd double %s, %m
  %i1 = add i64 %i, 1
  %c = icmp eq i64 %i1, %n
  br i1 %c, label %exit, label %loop
exit:
  %s.lcssa = phi double [ %s1, %loop ]
  br label %done
done:
  %r = phi double [ 0.0, %entry ], [ %s.lcssa, %exit ]
  ret double %r
}
"""


@pytest.mark.parametrize("count, expected", [("3", True), ("8", True), ("3000000", False)])
def test_constant_count_loops(count, expected):
    module = llvm.parse_assembly(LOOP.replace("COUNT", count), "t")
    before = module.text()
    assert llvm.unrolls_fully(module) is expected
    assert module.text() == before          # the probe ran on a copy
    llvm.verify(module)


def test_runtime_count_and_straight_line_code():
    module = llvm.parse_assembly(RUNTIME_COUNT, "t")
    assert llvm.unrolls_fully(module) is False
    straight = llvm.parse_assembly("define double @f(double %x) {\nentry:\n  %y = fmul double %x, %x\n"
                                   "  ret double %y\n}\n", "t")
    assert llvm.unrolls_fully(straight) is False


def test_probe_agrees_with_the_pipeline():
    """Where the probe says no, the pipeline with complete unrolling leaves the loops; where
    it says yes, the pipeline unrolls (no back edge remains)."""
    for count, expected in (("4", True), ("3000000", False)):
        module = llvm.parse_assembly(LOOP.replace("COUNT", count), "t")
        assert llvm.unrolls_fully(module) is expected
        llvm.optimize(module, 2, unroll="full", vectorize=False)
        has_loop = "br i1" in module.text()
        assert has_loop is not expected
