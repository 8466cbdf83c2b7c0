"""The analyses on their own, through their printers: CFG/loops/trip counts, activity."""
from __future__ import annotations

from enzyme_build.analysis.activity import print_activity
from enzyme_build.analysis.cfg import analyze_cfg, print_cfg
from enzyme_build.ir import parse_module

LOOP = """
define double @f(ptr %x, i32 %n, double %a) {
bb:
  %c = icmp sgt i32 %n, 0
  br i1 %c, label %pre, label %exit
pre:
  %tc = zext nneg i32 %n to i64
  br label %loop
loop:
  %iv = phi i64 [ 0, %pre ], [ %iv.next, %loop ]
  %s = phi double [ 0.000000e+00, %pre ], [ %s.next, %loop ]
  %p = getelementptr inbounds double, ptr %x, i64 %iv
  %v = load double, ptr %p, align 8
  %w = fmul double %v, %a
  %s.next = fadd double %s, %w
  %k = sitofp i32 %n to double
  %iv.next = add nuw nsw i64 %iv, 1
  %done = icmp eq i64 %iv.next, %tc
  br i1 %done, label %exit, label %loop
exit:
  %r = phi double [ 0.000000e+00, %bb ], [ %s.next, %loop ]
  ret double %r
}
"""


def test_cfg_printer_finds_loop_and_trip_count():
    fn = parse_module(LOOP).functions["f"]
    text = print_cfg(fn)
    assert "loop loop: blocks=['loop'] latches=['loop'] exits=['exit'] preheader=pre trip=%tc depth=1" in text
    cfg = analyze_cfg(fn)
    assert cfg.preds["exit"] == ["bb", "loop"] and cfg.idom["exit"] == "bb"
    assert cfg.in_loop("loop") and not cfg.in_loop("exit")


def test_loop_counting_from_a_value_has_start_and_bound():
    """`for (j = i + 1; j < n; j++)`: no trip count from 0, but start and bound are known at
    the loop's entry (the static tape record of such a loop holds bound - start cells)."""
    fn = parse_module(LOOP.replace("[ 0, %pre ]", "[ %first, %pre ]")
                      .replace("%tc = zext nneg i32 %n to i64", "%tc = zext nneg i32 %n to i64\n  %first = lshr i64 %tc, 1")
                      ).functions["f"]
    loop = analyze_cfg(fn).loops[0]
    assert loop.trip_count is None
    assert (loop.iv, loop.start, loop.bound) == ("%iv", "%first", "%tc")
    # a start computed inside the loop is not known at entry
    inside = parse_module(LOOP.replace("[ 0, %pre ]", "[ %iv.next, %pre ]")).functions["f"]
    assert analyze_cfg(inside).loops[0].bound is None


def test_activity_printer_with_dup_pointer_and_active_scalar():
    fn = parse_module(LOOP).functions["f"]
    text = print_activity(fn, ["dup", "const", "out"])
    lines = dict(line.strip().split(": ") for line in text.splitlines()[1:])
    assert lines["%x"] == "shadowed" and lines["%a"] == "varied" and lines["%n"] == "inactive"
    assert lines["%p"] == "shadowed" and lines["%v"] == "varied" and lines["%s.next"] == "varied"
    assert lines["%k"] == "inactive" and lines["%iv"] == "inactive" and lines["%done"] == "inactive"


def test_activity_const_pointer_makes_loads_inactive():
    fn = parse_module(LOOP).functions["f"]
    lines = dict(line.strip().split(": ") for line in print_activity(fn, ["const", "const", "out"]).splitlines()[1:])
    assert lines["%v"] == "inactive" and lines["%w"] == "varied" and lines["%p"] == "inactive"
