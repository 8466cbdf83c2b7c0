"""Loops taking one counter modulo two different powers of two (`tab[j % 16] * x[j % 4]`).

LLVM 22's loop vectorizer lets the no-wrap check of the wider mask stand for the narrower one
(llvm/llvm-project#191382, fixed after LLVM 22): the vector loop reads `x[4]` where the
program reads `x[0]`. Plain `clang-22 -O2` computes a wrong primal for such loops; in a build
with AD, the primal, the forward sweep and the reverse sweep's recomputed indices all went
through that vectorizer, and the gradient was wrong in sign or zero (fuzz seed 23978). The
link now keeps those loops scalar (`llvm.loop.vectorize.enable` false on their latches,
ad/passes.py: `masked_counter_latches`), in the program's own functions and in the derived
ones.

Each member is checked against central differences in reverse and forward mode at -O0, -O2
and with AD before optimization (without the marks, every one of them gives a wrong gradient
in every configuration); the IR tests check which
loops are marked and that the marked module is valid.
"""
from __future__ import annotations

import pytest

from ad_helpers import FD_HEAD, LEVELS, check_fd_rows, fd_main, fd_rows, verified
from enzyme_build.ad.passes import LoopIds, masked_counter_latches, unvectorize_masked_counters
from enzyme_build.ir.model import parse_module

PRELUDE = "static volatile int len = 7;\nstatic const double tab[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};\n"

PROGRAMS = {
    # a stack row filled from a table and the input, both indexed modulo a power of two
    "row_from_two_periods": PRELUDE + r"""
double f(const double *x) {
  int n = len;
  double row[8], t = 0;
  for (int j = 1; j < n; j++) row[j] = tab[j % 16] * x[j % 4];
  for (int i = 1; i < n; i++) t = 0.5 * t + row[i] * row[i];
  return t;
}
""",
    # the same with the masks written with &
    "masks_written_with_and": PRELUDE + r"""
double f(const double *x) {
  int n = len;
  double row[8], t = 0;
  for (int j = 1; j < n; j++) row[j] = tab[j & 7] * x[j & 3];
  for (int i = 1; i < n; i++) t = 0.5 * t + row[i] * row[i];
  return t;
}
""",
    # a static row the function fills and reads
    "static_row": PRELUDE + r"""
static double grow[8];
double f(const double *x) {
  int n = len;
  double t = 0;
  for (int j = 1; j < n; j++) grow[j] = tab[j % 16] * x[j % 4];
  for (int i = 1; i < n; i++) t = 0.5 * t + grow[i] * grow[i];
  return t;
}
""",
}


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_programs_of_the_class(name, level, tmp_path):
    flags, env = LEVELS[level]
    check_fd_rows(fd_rows(tmp_path, FD_HEAD + PROGRAMS[name] + fd_main(4), flags, env), 4)


MODULE = r"""
define void @g(ptr %x, ptr %y, i64 %n) {
entry:
  br label %two
two:
  %i = phi i64 [ 1, %entry ], [ %i.next, %two ]
  %a = and i64 %i, 15
  %b = and i64 %i, 3
  %pa = getelementptr double, ptr %x, i64 %a
  %pb = getelementptr double, ptr %x, i64 %b
  %va = load double, ptr %pa
  %vb = load double, ptr %pb
  %m = fmul double %va, %vb
  %py = getelementptr double, ptr %y, i64 %i
  store double %m, ptr %py
  %i.next = add nuw nsw i64 %i, 1
  %c = icmp eq i64 %i.next, %n
  br i1 %c, label %one, label %two, !llvm.loop !0
one:
  %k = phi i64 [ 0, %two ], [ %k.next, %one ]
  %r = urem i64 %k, 4
  %s = srem i64 %k, 3
  %pr = getelementptr double, ptr %x, i64 %r
  %vr = load double, ptr %pr
  %pk = getelementptr double, ptr %y, i64 %s
  store double %vr, ptr %pk
  %k.next = add nuw nsw i64 %k, 1
  %d = icmp eq i64 %k.next, %n
  br i1 %d, label %done, label %one
done:
  ret void
}
!0 = distinct !{!0, !1}
!1 = !{!"llvm.loop.mustprogress"}
"""


def test_only_the_loop_with_two_masks_is_marked():
    fn = parse_module(MODULE).functions["g"]
    assert [t.block for t in masked_counter_latches(fn)] == ["two"]


def test_the_marked_loop_keeps_its_metadata_and_the_module_is_valid():
    lines = MODULE.strip().split("\n")
    ids = LoopIds(line for line in lines if line.startswith("!"))
    body = "\n".join(line for line in lines if not line.startswith("!"))
    marked = unvectorize_masked_counters(body, ids)
    text = marked + "\n" + "\n".join(line for line in lines if line.startswith("!")) + "\n" + "\n".join(ids.lines)
    assert ids.lines == ['!2 = !{!"llvm.loop.vectorize.enable", i1 false}', "!3 = distinct !{!3, !1, !2}"]
    assert "br i1 %c, label %one, label %two, !llvm.loop !3" in marked
    assert "br i1 %d, label %done, label %one\n" in marked   # one mask: left alone
    verified(text)   # LLVM's parser and verifier
    # a second pass over marked code adds nothing
    again = LoopIds(text.split("\n"))
    assert unvectorize_masked_counters(marked, again) == marked and again.lines == []
