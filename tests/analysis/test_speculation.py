"""The speculation analysis on its own (analysis/speculation.py) and the post-dominators it
uses (analysis/cfg.py: PostDominators): which values a select, a min/max or a guarded block may
leave unused, so that their zero adjoint must not meet an infinite partial."""
from __future__ import annotations

from enzyme_build.analysis.cfg import PostDominators
from enzyme_build.analysis.speculation import print_speculation, speculated_values
from enzyme_build.ir import parse_module

SELECTS = """
define double @f(double %x, double %r, double %y) {
entry:
  %q = fdiv double %x, %r
  %sq = fmul double %q, %q
  %c = fcmp ogt double %r, 0.0
  %s = select i1 %c, double %sq, double %y
  %l = call double @llvm.log.f64(double %x)
  %m = call double @llvm.maxnum.f64(double %l, double -2.0)
  %t = fadd double %s, %m
  ret double %t
}
declare double @llvm.log.f64(double)
declare double @llvm.maxnum.f64(double, double)
"""

GUARDED = """
define double @g(double %x, double %y, i1 %c, i1 %d) {
entry:
  %t = fdiv double 1.0, %x
  %both = fmul double %x, %y
  br i1 %c, label %then, label %join
then:
  %u = fmul double %t, %t
  br label %join
join:
  %v = phi double [ %u, %then ], [ %y, %entry ]
  %w = fadd double %v, %both
  br i1 %d, label %more, label %done
more:
  %z = fmul double %both, 2.0
  br label %done
done:
  %e = phi double [ %z, %more ], [ %w, %join ]
  ret double %e
}
"""

LOOP = """
define double @h(ptr %p, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %s = phi double [ 0.0, %entry ], [ %s.next, %loop ]
  %a = getelementptr double, ptr %p, i64 %i
  %x = load double, ptr %a
  %sq = fmul double %x, %x
  %s.next = fadd double %s, %sq
  %i.next = add i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %exit
exit:
  %r = phi double [ %s.next, %loop ]
  ret double %r
}
"""


def test_select_and_maxnum_operands_and_what_only_they_read():
    fn = parse_module(SELECTS).functions["f"]
    found = speculated_values(fn)
    # %sq is the select's true operand, %q feeds only %sq; %l is maxnum's operand
    assert found == {"%q", "%sq", "%l"}
    # the condition, the select and what is returned are used: not speculated
    assert not found & {"%c", "%s", "%m", "%t"}
    text = print_speculation(fn)
    assert text.splitlines()[0] == "speculated values of @f: 3"
    assert "  %q  (fdiv in entry)" in text


def test_values_used_only_in_guarded_blocks():
    fn = parse_module(GUARDED).functions["g"]
    found = speculated_values(fn)
    # %t is made in entry and used only in `then`, which may be skipped
    assert "%t" in found
    # %both is used in `join`, which always runs after entry: not speculated, although its
    # other use (in `more`) is guarded
    assert "%both" not in found
    # %u flows into the phi on the edge from its own block: the edge is taken whenever %u is
    # made, so its adjoint is the phi's
    assert "%u" not in found
    # %z reaches the phi from `more`, its own block: not speculated; %w is read by the phi
    # on the edge out of `join`, which branches two ways: the edge may not be taken, but a
    # conditional edge does not count (a loop's latch looks the same)
    assert "%z" not in found and "%w" not in found


def test_loop_bodies_are_not_speculated():
    fn = parse_module(LOOP).functions["h"]
    assert speculated_values(fn) == frozenset()


def test_post_dominators():
    fn = parse_module(GUARDED).functions["g"]
    pdom = PostDominators(fn)
    assert pdom.post_dominates("join", "entry")
    assert pdom.post_dominates("done", "entry")
    assert pdom.post_dominates("done", "more")
    assert not pdom.post_dominates("then", "entry")
    assert not pdom.post_dominates("more", "join")
    assert pdom.post_dominates("join", "join")
    loop = parse_module(LOOP).functions["h"]
    pdom = PostDominators(loop)
    assert pdom.post_dominates("exit", "loop") and pdom.post_dominates("loop", "entry")
    assert not pdom.post_dominates("loop", "exit")


def _random_cfg(rng, n):
    """Module text of a function with n blocks, random branches, some returns (and maybe an
    endless loop), and the successor lists."""
    succs = {}
    lines = ["define void @r(i1 %c) {"]
    for k in range(n):
        lines.append(f"b{k}:")
        kind = rng.random()
        if k == n - 1 or kind < 0.15:
            succs[k] = []
            lines.append("  ret void")
        elif kind < 0.55:
            t = rng.randrange(n)
            succs[k] = [t]
            lines.append(f"  br label %b{t}")
        else:
            t, f = rng.randrange(n), rng.randrange(n)
            succs[k] = [t, f]
            lines.append(f"  br i1 %c, label %b{t}, label %b{f}")
    lines.append("}")
    return "\n".join(lines) + "\n", succs


def _reaches_end_avoiding(succs, start, avoid):
    seen, todo = set(), [start]
    while todo:
        x = todo.pop()
        if x in seen or x == avoid:
            continue
        seen.add(x)
        if not succs[x]:
            return True
        todo.extend(succs[x])
    return False


def test_post_dominators_against_paths():
    # a post-dominates b (b reaching an end at all) when no path from b to an end avoids a
    import random
    rng = random.Random(7)
    for _ in range(60):
        n = rng.randrange(2, 12)
        text, succs = _random_cfg(rng, n)
        fn = parse_module(text).functions["r"]
        pdom = PostDominators(fn)
        live = {int(b.label[1:]) for b in fn.blocks}    # the parser drops unreachable blocks
        for a in live:
            for b in live:
                if a == b or not _reaches_end_avoiding(succs, b, None):
                    continue
                want = not _reaches_end_avoiding(succs, b, a)
                assert pdom.post_dominates(f"b{a}", f"b{b}") == want, (text, a, b)
