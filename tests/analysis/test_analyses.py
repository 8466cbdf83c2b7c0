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


NEST = """
define double @g(ptr %w, ptr %x, i64 %n, i64 %m) {
entry:
  br label %outer
outer:
  %t = phi i64 [ 0, %entry ], [ %t.next, %outer.latch ]
  %s = phi double [ 0.000000e+00, %entry ], [ %s.next, %outer.latch ]
  %xp = getelementptr inbounds double, ptr %x, i64 %t
  %xt = load double, ptr %xp, align 8
  br label %inner
inner:
  %j = phi i64 [ 0, %outer ], [ %j.next, %inner.latch ]
  %a = phi double [ %s, %outer ], [ %a.next, %inner.latch ]
  %wp = getelementptr inbounds double, ptr %w, i64 %j
  %wj = load double, ptr %wp, align 8
  %e = call double @llvm.exp.f64(double %wj)
  %u = fmul double %wj, %xt
  %odd = icmp BRANCH_LHS, 0
  br i1 %odd, label %skip, label %inner.latch
skip:
  br label %inner.latch
inner.latch:
  %v = phi double [ %u, %inner ], [ %e, %skip ]
  %a.next = fadd double %a, %v
  %j.next = add nuw i64 %j, 1
  %more = icmp ult i64 %j.next, %n
  br i1 %more, label %inner, label %outer.latch
outer.latch:
  %s.next = phi double [ %a.next, %inner.latch ]
  STORE
  %t.next = add nuw i64 %t, 1
  %done = icmp eq i64 %t.next, %m
  br i1 %done, label %exit, label %outer
exit:
  ret double %s.next
}
declare double @llvm.exp.f64(double)
"""


def _invariants(text, stable=lambda inst: True):
    from enzyme_build.analysis.invariance import iteration_invariant
    fn = parse_module(text).functions["g"]
    cfg = analyze_cfg(fn)
    outer = next(loop for loop in cfg.loops if loop.header == "outer")
    return iteration_invariant(fn, cfg, outer, stable, lambda inst: "llvm.exp" in (inst.callee or ""))


def test_iteration_invariance_of_inner_loop_values():
    """Inside `for t { for j { ... w[j] ... } }` the inner counter restarts from 0 every t
    iteration, so w[j], exp(w[j]) and the inner branch on j are the same in every one; what
    depends on t (x[t], the sums carried from the outer header) is not."""
    inv = _invariants(NEST.replace("BRANCH_LHS", "ult i64 %j").replace("STORE", ""))
    assert {"%j", "%j.next", "%wp", "%wj", "%e", "%more", "%odd"} <= inv
    assert not inv & {"%t", "%t.next", "%xt", "%u", "%v", "%a", "%s.next", "%done"}
    # the loads are invariant only where the caller says their memory is unwritten
    assert "%wj" not in _invariants(NEST.replace("BRANCH_LHS", "ult i64 %j").replace("STORE", ""),
                                    stable=lambda inst: False)


def test_iteration_invariance_needs_the_same_path_every_iteration():
    """A branch between two blocks of the loop that tests the outer counter makes the
    iterations differ: nothing is invariant then (a branch leaving the loop may test anything)."""
    assert _invariants(NEST.replace("BRANCH_LHS", "ult i64 %t").replace("STORE", "")) is None
    exiting = NEST.replace("BRANCH_LHS", "ult i64 %j").replace(
        "br i1 %odd, label %skip, label %inner.latch", "%big = fcmp ogt double %a, 1.0\n"
        "  br i1 %big, label %exit2, label %inner.latch2\ninner.latch2:\n  br i1 %odd, label %skip, label %inner.latch") \
        .replace("STORE", "").replace("exit:\n  ret double %s.next", "exit:\n  ret double %s.next\nexit2:\n  ret double %a")
    exiting = exiting.replace("[ %u, %inner ]", "[ %u, %inner.latch2 ]")
    assert "%wj" in _invariants(exiting)


RULE_CALL = """
define double @h(ptr %x, ptr %y) {
bb:
  %a = call ptr @malloc(i64 32)
  store double 1.0, ptr %a, align 8
  call void @core(ptr %a, ptr %x, ptr %y)
  %v = load double, ptr %y, align 8
  ret double %v
}
declare ptr @malloc(i64)
declare void @core(ptr, ptr, ptr)
"""


def test_activity_gives_shadows_only_to_what_a_null_shadow_rule_writes():
    """A call of a function with custom rules gives every local pointer argument a shadow;
    when its rules take null shadows (shadow_outputs), only the pointers it writes
    through: the constant buffer %a stays shadowless and the output %y is shadowed."""
    fn = parse_module(RULE_CALL).functions["h"]

    def lines(**kw):
        text = print_activity(fn, ["dup", "const"], custom={"core"}, **kw)
        return dict(line.strip().split(": ") for line in text.splitlines()[1:])

    assert lines()["%a"] == "shadowed"
    outputs = lines(shadow_outputs={"core": "..o"})
    assert outputs["%a"] == "inactive" and outputs["%v"] == "inactive"   # %y is enzyme_const here
    fn_dup = print_activity(fn, ["dup", "dup"], custom={"core"}, shadow_outputs={"core": "..o"})
    assert "%a: inactive" in fn_dup and "%v: varied" in fn_dup
