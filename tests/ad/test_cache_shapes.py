"""IR in, IR out: what the reverse sweep keeps for common code shapes (a stencil's neighbour
pointers, split pieces of functions the user keeps out of line), each output verified by LLVM."""
from __future__ import annotations

import re

from enzyme_build import llvm
from enzyme_build.ad.driver import differentiate_module
from enzyme_build.ad.engine import Engine
from ad_helpers import fold_strides, function_body, function_block

DECLS = """
@enzyme_dup = external global i32
@enzyme_const = external global i32
declare double @__enzyme_autodiff(ptr, ...)
declare void @__enzyme_autodiff_void(ptr, ...)
declare noalias ptr @malloc(i64)
declare void @free(ptr)
"""

# A ping-pong stencil: per step, next[i] = u[i] * (u[i+1] - u[i]); the buffers swap every step,
# so u's values are taped, but the shadow of &u[i + 1] is a GEP of the step's shadow base
# (invariant in the inner loop) and `i + 1` (replayed): recomputed, never taped.
STENCIL = """
define double @stencil(ptr %u0, i64 %n, i32 %steps) {
entry:
  %bytes = shl i64 %n, 3
  %a = call ptr @malloc(i64 %bytes)
  %b = call ptr @malloc(i64 %bytes)
  call void @llvm.memcpy.p0.p0.i64(ptr %a, ptr %u0, i64 %bytes, i1 false)
  %last = add i64 %n, -1
  br label %step
step:
  %u = phi ptr [ %a, %entry ], [ %next, %step.end ]
  %next = phi ptr [ %b, %entry ], [ %u, %step.end ]
  %s = phi i32 [ 0, %entry ], [ %s.next, %step.end ]
  br label %point
point:
  %i = phi i64 [ 0, %step ], [ %i.next, %point ]
  %pu = getelementptr inbounds double, ptr %u, i64 %i
  %ui = load double, ptr %pu, align 8
  %i.next = add nuw nsw i64 %i, 1
  %pr = getelementptr inbounds double, ptr %u, i64 %i.next
  %ur = load double, ptr %pr, align 8
  %d = fsub double %ur, %ui
  %v = fmul double %ui, %d
  %pn = getelementptr inbounds double, ptr %next, i64 %i
  store double %v, ptr %pn, align 8
  %done = icmp eq i64 %i.next, %last
  br i1 %done, label %step.end, label %point
step.end:
  %s.next = add nuw nsw i32 %s, 1
  %fin = icmp eq i32 %s.next, %steps
  br i1 %fin, label %exit, label %step
exit:
  %p0 = getelementptr inbounds double, ptr %next, i64 0
  %r = load double, ptr %p0, align 8
  call void @free(ptr %a)
  call void @free(ptr %b)
  ret double %r
}
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)

define double @use_stencil(ptr %u0, ptr %du0, i64 %n, i32 %steps) {
entry:
  %r = call double (ptr, ...) @__enzyme_autodiff(ptr @stencil, ptr @enzyme_dup, ptr %u0, ptr %du0, ptr @enzyme_const, i64 %n, ptr @enzyme_const, i32 %steps)
  ret double %r
}
"""


# The same stepper over two work buffers the caller passes (enzyme_dup): their size is not
# known, so no snapshot can be taken and u's values are taped per point, in a static record.
STENCIL_ARGS = STENCIL.replace(
    "define double @stencil(ptr %u0, i64 %n, i32 %steps) {", "define double @stencil(ptr %u0, ptr %a, ptr %b, i64 %n, i32 %steps) {"
).replace("  %a = call ptr @malloc(i64 %bytes)\n  %b = call ptr @malloc(i64 %bytes)\n", "").replace(
    "  call void @free(ptr %a)\n  call void @free(ptr %b)\n", "").replace(
    "ptr @enzyme_dup, ptr %u0, ptr %du0, ptr @enzyme_const, i64 %n",
    "ptr @enzyme_dup, ptr %u0, ptr %du0, ptr @enzyme_dup, ptr %wa, ptr %dwa, ptr @enzyme_dup, ptr %wb, ptr %dwb, "
    "ptr @enzyme_const, i64 %n").replace(
    "define double @use_stencil(ptr %u0, ptr %du0, i64 %n, i32 %steps) {",
    "define double @use_stencil(ptr %u0, ptr %du0, ptr %wa, ptr %dwa, ptr %wb, ptr %dwb, i64 %n, i32 %steps) {")


def differentiate(text: str) -> str:
    out = differentiate_module(text + DECLS)
    llvm.verify(llvm.parse_assembly(out, "cache-shapes"), generated=True)
    return out


# The stepper reading a third neighbour, u[i + 2]: three reads of u per point.
STENCIL3 = STENCIL.replace("  %last = add i64 %n, -1\n", "  %last = add i64 %n, -2\n").replace(
    "  %v = fmul double %ui, %d\n",
    "  %i.two = add nuw nsw i64 %i, 2\n  %p2 = getelementptr inbounds double, ptr %u, i64 %i.two\n"
    "  %u2 = load double, ptr %p2, align 8\n  %v0 = fmul double %ui, %d\n  %v = fadd double %v0, %u2\n")


def test_stencil_over_own_buffers_reads_a_snapshot_of_each_step():
    """The function's own buffers (malloc'd, never captured, swapped every step): nothing in
    the point loop writes u, so the forward sweep copies u onto the tape before the loop and
    the reverse sweep reads u[i] and u[i + 1] back from that copy (u[i + 2] enters linearly:
    its value is not needed); nothing is kept per point. (With two reads per point, the
    stepper above, the values are kept: a copy would keep as much.)"""
    fn = function_body(differentiate(STENCIL3), "diffe_stencil")
    step, point = function_block(fn, "step"), function_block(fn, "point")
    assert re.search(r"%snap\.off\$0 = call i64 @__enzyme_build_tape_frame\(ptr %tape\$, i64 %snb\$\d+\)", step), step
    assert re.search(r"call void @llvm\.memcpy\.p0\.p0\.i64\(ptr %snap\$\d+, ptr %u, i64 %bytes, i1 false\)", step), step
    assert "%scell" not in point and "@__enzyme_build_tape" not in point, point
    rev = function_block(fn, "rev$point")
    assert len(re.findall(r"%sn\$\d+ = load double, ptr %snc\$\d+", rev)) == 2, rev   # u[i + 2] enters linearly
    # the copy is popped when the reverse sweep leaves the loop, in the reverse of its preheader
    assert "@__enzyme_build_tape_pop" in function_block(fn, "rev$step"), fn


def test_stencil_neighbour_shadow_pointer_is_recomputed_not_taped():
    fn = function_body(differentiate(STENCIL_ARGS), "diffe_stencil")
    point = function_block(fn, "point")
    # only doubles go to the per-point record: no shadow pointer (`store ptr ... %scell`)
    assert not re.search(r"store ptr %\S+, ptr %scell", point), point
    assert re.search(r"store double %ui, ptr %scell", point)
    # the reverse sweep rebuilds &u'[i + 1] from the hoisted shadow base and the replayed IV
    rev = function_block(fn, "rev$point")
    m = re.search(r"(%rc\$\d+) = add nuw nsw i64 (%iv\$\d+), 1", rev)
    assert m, rev
    assert re.search(rf"getelementptr inbounds double, ptr %inv\$\d+, i64 {re.escape(m.group(1))}", rev)


CALLEES = """
define double @small(double %x) {
entry:
  %m = fmul double %x, %x
  ret double %m
}

define double @kept(double %x) #7 {
entry:
  %m = fmul double %x, %x
  ret double %m
}

define double @both(double %x) {
entry:
  %a = call double @small(double %x)
  %b = call double @kept(double %a)
  ret double %b
}

define double @use(double %x) {
entry:
  %r = call double (ptr, ...) @__enzyme_autodiff(ptr @both, double %x)
  ret double %r
}

attributes #7 = { noinline nounwind }
"""


def headers(out: str) -> dict[str, str]:
    return {m.group(1): m.group(0) for m in re.finditer(r"^define [^\n]*@(\w+)\([^\n]*$", out, re.M)}


def test_split_pieces_of_noinline_functions_are_not_forced_inline():
    heads = headers(differentiate(CALLEES))
    assert "alwaysinline" in heads["augmented_small"] and "alwaysinline" in heads["reverse_small"]
    assert "alwaysinline" not in heads["augmented_kept"] and "alwaysinline" not in heads["reverse_kept"]


def test_derivatives_of_noinline_functions_are_noinline():
    # a function the user kept out of line keeps its derivatives out of line: otherwise the
    # inliner folds every single-caller derived function into the top-level gradient (a
    # 300k-instruction function for a program of 700 noinline callees; optimization and code
    # generation took 2.5x longer and could not be split across cores)
    out = differentiate(CALLEES)
    heads = headers(out)
    groups = dict(re.findall(r"^attributes (#\d+) = (\{.*\})$", out, re.M))
    for name in ("augmented_kept", "reverse_kept"):
        group = re.search(r"\) (#\d+) \{$", heads[name])
        assert group and "noinline" in groups[group.group(1)].split(), (heads[name], groups)
    for name in ("augmented_small", "reverse_small"):
        group = re.search(r"\) (#\d+) \{$", heads[name])
        assert not group or "noinline" not in groups[group.group(1)].split(), (heads[name], groups)


def test_force_inlining_stops_at_the_module_budget(monkeypatch):
    # a budget of three instructions admits @small (two) but not @kept's twin after it
    monkeypatch.setattr(Engine, "INLINE_PIECES_BUDGET", 3)
    heads = headers(differentiate(CALLEES.replace(" #7 {", " {")))
    inlined = [f for f in ("small", "kept") if "alwaysinline" in heads[f"augmented_{f}"]]
    assert len(inlined) == 1, heads


# A pair interaction: d = xj - xi, r2 = d*d + eps, s = sqrt(r2), w = 1 / (r2 * s), f = w * d.
# The record keeps d (its loads come from memory the loop writes) and sqrt(r2); r2, r2 * s and
# 1 / (r2 * s) are rebuilt from them in the reverse block instead of taking three more cells.
PAIRS = """
define void @pairs(ptr %x, ptr %f, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %i.next = add nuw nsw i64 %i, 1
  %px = getelementptr inbounds double, ptr %x, i64 %i
  %py = getelementptr inbounds double, ptr %x, i64 %i.next
  %xi = load double, ptr %px, align 8
  %xj = load double, ptr %py, align 8
  %d = fsub double %xj, %xi
  %dd = fmul double %d, %d
  %r2 = fadd double %dd, 1.000000e-02
  %s = call double @llvm.sqrt.f64(double %r2)
  %q = fmul double %r2, %s
  %w = fdiv double 1.000000e+00, %q
  %fw = fmul double %w, %d
  store double %fw, ptr %px, align 8
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}
declare double @llvm.sqrt.f64(double)

define void @use_pairs(ptr %x, ptr %dx, ptr %f, i64 %n) {
entry:
  call void (ptr, ...) @__enzyme_autodiff_void(ptr @pairs, ptr @enzyme_dup, ptr %x, ptr %dx, ptr @enzyme_const, ptr %f, ptr @enzyme_const, i64 %n)
  ret void
}
"""


def test_arithmetic_on_kept_values_is_rebuilt_not_taped():
    fn = fold_strides(function_body(differentiate(PAIRS), "diffe_pairs"))
    loop = function_block(fn, "loop")
    taped = set(re.findall(r"store double (%\w+), ptr %scell", loop))
    # two cells per iteration: d and sqrt(r2) (xi, xj are read again or folded into d)
    assert taped == {"%d", "%s"}, loop
    assert re.search(r"%tb\$\d+ = mul i64 %tc\$\d+, 16\n", fn)
    rev = function_block(fn, "rev$loop")
    assert re.search(r"= fmul double %r\$\d+, %r\$\d+", rev)          # d*d from the kept d
    # w rebuilt from the rebuilt q: the one division of the reverse (w's own partial is -w*w,
    # and x * sqrt(x) reverses as 1.5 sqrt(x): no division for either)
    assert re.search(r"= fdiv double 1\.000000e\+00, %rk\$\d+", rev), rev
    assert len(re.findall(r"= fdiv ", rev)) == 1, rev



# A table filled before a loop and only read in it (GMM's Q matrices in their own buffer):
# the reverse sweep reads t[i] again instead of taping it, and the free of the table waits
# for the end of the reverse sweep.
TABLE = """
define double @table(ptr %x, i64 %n) {
entry:
  %bytes = shl i64 %n, 3
  %t = call ptr @malloc(i64 %bytes)
  br label %fill
fill:
  %i = phi i64 [ 0, %entry ], [ %i.next, %fill ]
  %px = getelementptr inbounds double, ptr %x, i64 %i
  %xi = load double, ptr %px, align 8
  %e = call double @llvm.exp.f64(double %xi)
  %pt = getelementptr inbounds double, ptr %t, i64 %i
  store double %e, ptr %pt, align 8
  %i.next = add nuw nsw i64 %i, 1
  %filled = icmp eq i64 %i.next, %n
  br i1 %filled, label %use.pre, label %fill
use.pre:
  br label %use
use:
  %j = phi i64 [ 0, %use.pre ], [ %j.next, %use ]
  %s = phi double [ 0.0, %use.pre ], [ %s.next, %use ]
  %pu = getelementptr inbounds double, ptr %t, i64 %j
  %tj = load double, ptr %pu, align 8
  %sq = fmul double %tj, %tj
  %s.next = fadd double %s, %sq
  %j.next = add nuw nsw i64 %j, 1
  %done = icmp eq i64 %j.next, %n
  br i1 %done, label %exit, label %use
exit:
  call void @free(ptr %t)
  ret double %s.next
}
declare double @llvm.exp.f64(double)

define void @use_table(ptr %x, ptr %dx, i64 %n) {
entry:
  call void (ptr, ...) @__enzyme_autodiff_void(ptr @table, ptr @enzyme_dup, ptr %x, ptr %dx, ptr @enzyme_const, i64 %n)
  ret void
}
"""


def test_table_read_after_its_last_write_is_read_again_and_freed_at_the_end():
    fn = function_body(differentiate(TABLE), "diffe_table")
    use = function_block(fn, "use")
    assert "store double %tj, ptr" not in use, use            # not taped
    rev = function_block(fn, "rev$use")
    assert re.search(r"%rl\$\d+ = load double, ptr %rc\$\d+, align 8", rev), rev
    # the primal free moved from the forward return block to the end of the reverse sweep
    assert "call void @free(ptr %t)" not in function_block(fn, "exit")
    assert "call void @free(ptr %t)" in function_block(fn, "exit$")


def test_table_written_after_the_read_is_still_taped():
    # a store into the table after the read loop: the values read must be kept
    text = TABLE.replace("exit:\n  call void @free(ptr %t)",
                         "exit:\n  store double 0.0, ptr %t, align 8\n  call void @free(ptr %t)")
    fn = function_body(differentiate(text), "diffe_table")
    # (each element is read once: a copy of the table would keep as much, so none is taken)
    assert "store double %tj, ptr %scell" in function_block(fn, "use")
    assert "call void @free(ptr %t)" in function_block(fn, "exit")
