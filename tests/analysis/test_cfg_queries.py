"""CFG queries the engine asks per value or per edge (dominance, layout order, outermost loops,
natural loops), checked against their definitions on nested loops and a sibling loop."""
from __future__ import annotations

import itertools

from enzyme_build.analysis.cfg import analyze_cfg, deciding_branch
from enzyme_build.ir import parse_module

NESTED = """
define void @f(i64 %n, i1 %c) {
entry:
  br label %outer
outer:
  %i = phi i64 [ 0, %entry ], [ %i.next, %outer.latch ]
  br label %inner
inner:
  %j = phi i64 [ 0, %outer ], [ %j.next, %inner ]
  %j.next = add i64 %j, 1
  %jd = icmp eq i64 %j.next, %n
  br i1 %jd, label %outer.latch, label %inner
outer.latch:
  %i.next = add i64 %i, 1
  %id = icmp eq i64 %i.next, %n
  br i1 %id, label %mid, label %outer
mid:
  br i1 %c, label %second, label %exit
second:
  %k = phi i64 [ 0, %mid ], [ %k.next, %second ]
  %k.next = add i64 %k, 1
  %kd = icmp eq i64 %k.next, %n
  br i1 %kd, label %exit, label %second
dead:
  br label %exit
exit:
  ret void
}
"""


def _by_chain(cfg, a, b):
    """Dominance by its definition on the immediate-dominator chain."""
    while b is not None:
        if a == b:
            return True
        b = cfg.idom.get(b)
    return False


def test_dominates_agrees_with_the_idom_chain():
    cfg = analyze_cfg(parse_module(NESTED).functions["f"])
    for a, b in itertools.product(cfg.order, repeat=2):
        assert cfg.dominates(a, b) == _by_chain(cfg, a, b), (a, b)
    assert cfg.dominates("outer", "outer.latch") and not cfg.dominates("second", "exit")
    assert cfg.dominates("dead", "dead") and not cfg.dominates("entry", "dead")


def test_loop_queries():
    cfg = analyze_cfg(parse_module(NESTED).functions["f"])
    by_header = {loop.header: loop for loop in cfg.loops}
    assert {h: l.depth for h, l in by_header.items()} == {"inner": 2, "outer": 1, "second": 1}
    assert by_header["outer"].exits == ["mid"] and by_header["inner"].exits == ["outer.latch"]
    assert cfg.top_loops_of("inner") == [by_header["outer"]]
    assert cfg.top_loops_of("second") == [by_header["second"]] and cfg.top_loops_of("mid") == []
    assert all(cfg.is_natural(loop) for loop in cfg.loops)
    assert cfg.in_layout_order({"exit", "inner", "outer", "mid"}) == ["outer", "inner", "mid", "exit"]


# joins and the branches that decide them (`deciding_branch`)
JOINS = """
define void @g(i64 %n, i1 %c, i1 %d, double %x) {
entry:
  %big = icmp sgt i64 %n, 4
  br i1 %big, label %diamond.a, label %diamond.b
diamond.a:
  br label %diamond.join
diamond.b:
  br label %diamond.join
diamond.join:
  %pos = fcmp ogt double %x, 0.0
  br i1 %pos, label %guard.then, label %guard.join
guard.then:
  br label %guard.join
guard.join:
  %any = icmp sgt i64 %n, 0
  br i1 %any, label %outer, label %done
outer:
  %i = phi i64 [ 0, %guard.join ], [ %i.next, %outer.latch ]
  %i.next = add nuw nsw i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %inner, label %outer.latch
inner:
  %j = phi i64 [ %i.next, %outer ], [ %j.next, %inner ]
  %j.next = add nuw nsw i64 %j, 1
  %jd = icmp eq i64 %j.next, %n
  br i1 %jd, label %inner.exit, label %inner
inner.exit:
  br label %outer.latch
outer.latch:
  %id = icmp eq i64 %i.next, %n
  br i1 %id, label %done, label %outer
done:
  br i1 %c, label %head, label %out
head:
  %y = phi double [ %x, %done ], [ %y2, %head ]
  %y2 = fmul double %y, 2.0
  %small = fcmp olt double %y2, 10.0
  br i1 %small, label %head, label %out
out:
  ret void
}

; a cycle with two ways in (irreducible): the join in it is not decided by the guard
define void @h(i1 %c, i1 %d) {
entry:
  br i1 %c, label %q, label %b
q:
  br label %b
b:
  br i1 %d, label %q, label %out
out:
  ret void
}
"""


def test_deciding_branches_of_joins():
    fn = parse_module(JOINS).functions["g"]
    cfg = analyze_cfg(fn)
    # a diamond: true went through diamond.a
    assert deciding_branch(fn, cfg, "diamond.join") == ("%big", "diamond.a", "diamond.b")
    # an `if` without `else`: true came through guard.then, false straight from the branch
    assert deciding_branch(fn, cfg, "guard.join") == ("%pos", "guard.then", "diamond.join")
    # the guard of an inner loop that may run zero times: inside the outer loop, whose
    # header is the guard (every way back to inner.exit passes through it)
    assert deciding_branch(fn, cfg, "outer.latch") == ("%more", "inner.exit", "outer")
    # after the loop, guarded by `n > 0`: true ran the loop and left it from its latch
    assert deciding_branch(fn, cfg, "done") == ("%any", "outer.latch", "guard.join")
    # a loop header entered from a guard: its later iterations come from the latch whatever
    # the guard said, so the guard decides nothing there
    assert deciding_branch(fn, cfg, "head") is None
    # the exit of that loop is decided by the guard: control that left through the loop
    # had gone into it, and cannot come back to the guard
    assert deciding_branch(fn, cfg, "out") == ("%c", "head", "done")
    # blocks with one predecessor, and the entry, have nothing to decide
    assert deciding_branch(fn, cfg, "inner.exit") is None and deciding_branch(fn, cfg, "entry") is None


def test_irreducible_cycles_decide_nothing():
    fn = parse_module(JOINS).functions["h"]
    cfg = analyze_cfg(fn)
    assert not cfg.reducible()
    assert deciding_branch(fn, cfg, "b") is None
    assert analyze_cfg(parse_module(JOINS).functions["g"]).reducible()
    assert analyze_cfg(parse_module(NESTED).functions["f"]).reducible()


THREADED = """
define void @t(i64 %n, i1 %c) {
entry:
  br label %head
head:
  %i = phi i64 [ 0, %entry ], [ %i.next, %join ]
  br i1 %c, label %work, label %skip.thread
work:
  %k = phi i64 [ 0, %head ], [ %k.next, %work ]
  %k.next = add nuw i64 %k, 1
  %kd = icmp eq i64 %k.next, %n
  br i1 %kd, label %work.exit, label %work
work.exit:
  br label %join
skip.thread:
  br label %join
join:
  %i.next = add nuw i64 %i, 1
  %id = icmp eq i64 %i.next, %n
  br i1 %id, label %out, label %head
out:
  ret void
}

; the way into %join is %p only when both %c and %d held: no one branch decides it
define void @u(i1 %c, i1 %d) {
entry:
  br i1 %c, label %p, label %q
p:
  br i1 %d, label %join, label %z
z:
  br label %q
q:
  br label %join
join:
  ret void
}
"""


def test_a_threaded_skip_path_is_decided_by_the_branch_before_it():
    fn = parse_module(THREADED).functions["t"]
    cfg = analyze_cfg(fn)
    # join: from work.exit (the loop ran: %c true) or skip.thread (only reached from head's
    # false edge, and going nowhere but the join)
    assert deciding_branch(fn, cfg, "join") == ("%c", "work.exit", "skip.thread")
    other = parse_module(THREADED).functions["u"]
    assert deciding_branch(other, analyze_cfg(other), "join") is None
