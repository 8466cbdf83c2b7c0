"""CFG queries the engine asks per value or per edge (dominance, layout order, outermost loops,
natural loops), checked against their definitions on nested loops and a sibling loop."""
from __future__ import annotations

import itertools

from enzyme_build.analysis.cfg import analyze_cfg
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
