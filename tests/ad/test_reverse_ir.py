"""IR in, IR out: what diffe_<f>, augmented_<f> and reverse_<f> look like for small hand-written
functions (adjoint slots, static tape records with their strides, re-reads, IV replay,
predecessor indices, per-iteration pushes, derived callees, split pieces and their tape),
each output verified by LLVM."""
from __future__ import annotations

import re
import subprocess

import pytest

from enzyme_build import llvm, toolchain
from enzyme_build.ad.driver import differentiate_module
from ad_helpers import fold_strides, function_body, function_block

FUNCTIONS = """
define double @square(double %x) {
entry:
  %m = fmul double %x, %x
  ret double %m
}

; a counted loop whose values are all re-read from the (unwritten) argument: a static record of stride 0
define double @sumsq(ptr %v, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %s = phi double [ 0.0, %entry ], [ %s.next, %loop ]
  %p = getelementptr inbounds double, ptr %v, i64 %i
  %x = load double, ptr %p, align 8
  %sq = fmul double %x, %x
  %s.next = fadd double %s, %sq
  %i.next = add nuw nsw i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret double %s.next
}

; a counted loop that keeps two values per iteration (sin's operand and the running sum)
define double @sinloop(ptr %v, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %s = phi double [ 0.0, %entry ], [ %s.next, %loop ]
  %p = getelementptr inbounds double, ptr %v, i64 %i
  %x = load double, ptr %p, align 8
  %m = fmul double %x, %s
  %sn = call double @llvm.sin.f64(double %m)
  %s.next = fadd double %s, %sn
  %i.next = add nuw nsw i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret double %s.next
}

; two counted loops in one function: each gets its own static record and stride
define double @twoloops(ptr %v, i64 %n) {
entry:
  br label %a
a:
  %i = phi i64 [ 0, %entry ], [ %i.next, %a ]
  %s = phi double [ 1.0, %entry ], [ %s.next, %a ]
  %p = getelementptr inbounds double, ptr %v, i64 %i
  %x = load double, ptr %p, align 8
  %e = call double @llvm.exp.f64(double %s)
  %s.next = fmul double %e, %x
  %i.next = add nuw nsw i64 %i, 1
  %adone = icmp eq i64 %i.next, %n
  br i1 %adone, label %mid, label %a
mid:
  br label %b
b:
  %j = phi i64 [ 0, %mid ], [ %j.next, %b ]
  %t = phi double [ %s.next, %mid ], [ %t.next, %b ]
  %q = getelementptr inbounds double, ptr %v, i64 %j
  %y = load double, ptr %q, align 8
  %t.next = fadd double %t, %y
  %j.next = add nuw nsw i64 %j, 1
  %bdone = icmp eq i64 %j.next, %n
  br i1 %bdone, label %exit, label %b
exit:
  ret double %t.next
}

; a loop whose trip count is unknown when it starts: one tape record per iteration
define double @until(double %x) {
entry:
  br label %loop
loop:
  %y = phi double [ %x, %entry ], [ %y.next, %loop ]
  %y.next = call double @llvm.sin.f64(double %y)
  %big = fcmp ogt double %y.next, 1.000000e-01
  br i1 %big, label %loop, label %exit
exit:
  ret double %y.next
}

; a diamond: the join's phi gets its adjoint back along the edge taken
define double @branch(double %x, double %y) {
entry:
  %c = fcmp olt double %x, %y
  br i1 %c, label %then, label %else
then:
  %a = fmul double %x, %y
  br label %join
else:
  %b = fadd double %x, %y
  br label %join
join:
  %r = phi double [ %a, %then ], [ %b, %else ]
  ret double %r
}

; a store into dup memory: the reverse sweep reads and consumes the output adjoint
define void @scale(ptr %out, double %x) {
entry:
  %q = getelementptr inbounds double, ptr %out, i64 1
  %s = fmul double %x, 3.0
  store double %s, ptr %q, align 8
  ret void
}

; a callee with a body, called twice: one pair of split pieces serves both calls
define double @outer(double %x) {
entry:
  %a = call double @square(double %x)
  %b = call double @square(double %a)
  ret double %b
}

; a value of one block used four times in the next: its adjoint lives in a slot
define double @fanout(double %x) {
entry:
  %a = fmul double %x, 2.0
  br label %next
next:
  %b = fmul double %a, %a
  %d = fadd double %b, %a
  %e = fmul double %d, %a
  ret double %e
}

declare double @llvm.sin.f64(double)
declare double @llvm.exp.f64(double)

@enzyme_dup = external global i32
@enzyme_const = external global i32
@enzyme_out = external global i32
declare double @__enzyme_autodiff(ptr, ...)
declare void @__enzyme_autodiff_void(ptr, ...)
declare { double, double } @__enzyme_autodiff_pair(ptr, ...)
declare ptr @__enzyme_augmentfwd(ptr, ...)
declare double @__enzyme_reverse(ptr, ...)
"""


def differentiate(caller: str) -> str:
    """The module with `caller` added, through the engine; verified by LLVM."""
    out = differentiate_module(FUNCTIONS + caller)
    llvm.verify(llvm.parse_assembly(out, "reverse-ir"), generated=True)
    return out


def test_scalar_function_gets_adjoint_slots_and_a_seed():
    """x's adjoint (a parameter, read at the exit) is a slot; m's is an SSA value in the
    reverse of its block (its one use, the return, is in the same block), seeded with 1.0,
    which folds: d(x*x) flows to x twice as x itself."""
    out = differentiate("""
define double @use(double %x) {
entry:
  %r = call double (ptr, ...) @__enzyme_autodiff(ptr @square, double %x)
  ret double %r
}
""")
    fn = function_body(out, "diffe_square")
    assert fn.startswith("define internal double @diffe_square(double %x) {")
    assert "%x$d = alloca double" in fn and "%m$d" not in fn
    assert len(re.findall(r"= fadd reassoc double %da\$\d+, %x\n", function_block(fn, "rev$entry"))) == 2
    assert "tape" not in fn                       # nothing needs keeping
    assert re.search(r"ret double %ret\$\d+", function_block(fn, "exit$"))
    use = function_body(out, "use")
    assert re.search(r"call double @diffe_square\(double %x\)", use)
    assert "__enzyme_autodiff" not in use


def test_counted_loop_rereads_its_argument():
    out = differentiate("""
define void @use(ptr %v, ptr %dv, i64 %n) {
entry:
  call void (ptr, ...) @__enzyme_autodiff_void(ptr @sumsq, ptr @enzyme_dup, ptr %v, ptr %dv, ptr @enzyme_const, i64 %n)
  ret void
}
""")
    fn = function_body(out, "diffe_sumsq")
    assert fn.startswith("define internal void @diffe_sumsq(ptr %v, ptr %v$sh, i64 %n) {")
    # the stride is a value defined once the reverse sweep is planned: 0, nothing taped
    assert "  %static.stride$0 = add i64 0, 0\n" in function_block(fn, "entry")
    fn = fold_strides(fn)
    assert re.search(r"%tb\$\d+ = mul i64 %tc\$\d+, 0\n", fn)
    assert "__enzyme_build_tape_push" not in fn
    rev = function_block(fn, "rev$loop")
    # IV replay from the counter slot; x re-read from v; its adjoint added to v's shadow
    assert re.search(r"%iv\$\d+ = load i64, ptr %i\$ivslot", rev)
    assert re.search(r"getelementptr inbounds double, ptr %v, i64 %iv\$\d+", rev)
    assert re.search(r"getelementptr inbounds double, ptr %v\$sh, i64 %iv\$\d+", rev)
    assert re.search(r"%dm\$\d+ = fadd reassoc nsz double %dm\$\d+, %\S+\n  store double %dm\$\d+, ptr %rc\$\d+", rev)
    # the way back: the replayed IV tells the first iteration apart, no predecessor index is kept
    assert re.search(r"icmp eq i64 %iv\$\d+, 0", rev)
    assert re.search(r"switch i32 %rc\$\d+, label %rev\$loop\$from\$entry \[ i32 1, label %rev\$loop\$from\$loop \]", rev)
    assert re.search(r"sub i64 %iv\$\d+, 1", function_block(fn, "rev$loop$from$loop"))


def test_counted_loop_keeps_values_on_a_static_record():
    out = differentiate("""
define void @use(ptr %v, ptr %dv, i64 %n) {
entry:
  call void (ptr, ...) @__enzyme_autodiff_void(ptr @sinloop, ptr @enzyme_dup, ptr %v, ptr %dv, ptr @enzyme_const, i64 %n)
  ret void
}
""")
    fn = fold_strides(function_body(out, "diffe_sinloop"))
    entry = function_block(fn, "entry")
    # one record of n * 16 bytes reserved before the loop: two doubles per iteration
    assert re.search(r"%tb\$\d+ = mul i64 %tc\$\d+, 16\n  %static\.off\$0 = call i64 @__enzyme_build_tape_frame"
                     r"\(ptr %tape\$, i64 %tb\$\d+\)", entry)
    # laid out by columns: n values of %m, then n values of %s; the loop never grows the tape,
    # so each column's base is taken once before it (the first column's is the record's
    # base: no offset is made for it) and each iteration steps 8 bytes, one offset for both
    cols = re.findall(r"(%scol\$\d+) = mul i64 %tc\$\d+, (\d+)", entry)
    assert [int(c) for _, c in cols] == [8], entry
    assert re.search(r"%static\.off\$0\$base = call ptr @__enzyme_build_tape_at\(ptr %tape\$, i64 %static\.off\$0\)",
                     entry)
    second = re.search(rf"(%scol\$\d+) = getelementptr inbounds i8, ptr %static\.off\$0\$base, "
                       rf"i64 {re.escape(cols[0][0])}\n", entry)
    assert second, entry
    loop = function_block(fn, "loop")
    assert "@__enzyme_build_tape_at" not in loop
    assert len(re.findall(r"%soff\$\d+ = mul i64 %i, 8\n", loop)) == 1, loop
    for value, base in (("%m", "%static.off$0$base"), ("%s", second.group(1))):
        m = re.search(rf"(%scell\$\d+) = getelementptr inbounds i8, ptr {re.escape(base)}, i64 %soff\$\d+\n"
                      rf"  store double {value}, ptr (%scell\$\d+), align 8", loop)
        assert m and m.group(1) == m.group(2), loop
    assert "__enzyme_build_tape_push" not in fn
    rev = function_block(fn, "rev$loop")
    # one tape address for the record; the row of the iteration; %s one column further
    assert rev.count("@__enzyme_build_tape_at") == 1, rev
    row = re.search(r"(%srow\$\d+) = getelementptr inbounds i8, ptr %srec\$\d+, i64 %soff\$\d+\n", rev)
    assert row, rev
    m = re.search(rf"(%r\$\d+) = load double, ptr {re.escape(row.group(1))}, align 8", rev)
    assert m and re.search(rf"call double @llvm\.cos\.f64\(double {re.escape(m.group(1))}\)", rev)
    assert re.search(rf"%scell\$\d+ = getelementptr inbounds i8, ptr {re.escape(row.group(1))}, i64 %scol\$\d+\n"
                     r"  %r\$\d+ = load double, ptr %scell\$\d+", rev)
    # the record is dropped when the reverse sweep leaves the loop for good
    assert "call ptr @__enzyme_build_tape_pop(ptr %tape$, i64 %tb$" in function_block(fn, "rev$loop$from$entry")
    assert "call void @__enzyme_build_tape_free_data(ptr %tape$)" in function_block(fn, "exit$")


def test_each_static_loop_has_its_own_stride():
    out = differentiate("""
define double @use(ptr %v, ptr %dv, i64 %n) {
entry:
  %r = call double (ptr, ...) @__enzyme_autodiff(ptr @twoloops, ptr @enzyme_dup, ptr %v, ptr %dv, ptr @enzyme_const, i64 %n)
  ret double %r
}
""")
    fn = function_body(out, "diffe_twoloops")
    assert ";" not in fn   # no marker comments left in derived code
    assert fn.count("%static.stride$0 = add") == 1 and fn.count("%static.stride$1 = add") == 1
    fn = fold_strides(fn)
    strides = {int(s) for s in re.findall(r"= mul i64 %tc\$\d+, (\d+)\n", fn)}
    # loop a keeps exp(s), the partial of e * x by x (x itself is re-read); loop b keeps nothing
    assert strides == {0, 8}, fn
    assert "%static.off$0 = call i64" in fn and "%static.off$1 = call i64" in fn


def test_unknown_trip_count_pushes_per_iteration():
    out = differentiate("""
define double @use(double %x) {
entry:
  %r = call double (ptr, ...) @__enzyme_autodiff(ptr @until, double %x)
  ret double %r
}
""")
    fn = function_body(out, "diffe_until")
    loop, rev = function_block(fn, "loop"), function_block(fn, "rev$loop")
    assert re.search(r"call ptr @__enzyme_build_tape_push\(ptr %tape\$, i64 \d+\)", loop)
    assert "store double %y, ptr" in loop
    assert re.search(r"call ptr @__enzyme_build_tape_pop\(ptr %tape\$, i64 \d+\)", rev)
    assert re.search(r"call double @llvm\.cos\.f64\(double %r\$\d+\)", rev)


def test_branch_records_the_predecessor():
    out = differentiate("""
define { double, double } @use(double %x, double %y) {
entry:
  %r = call { double, double } (ptr, ...) @__enzyme_autodiff_pair(ptr @branch, double %x, double %y)
  ret { double, double } %r
}
""")
    fn = function_body(out, "diffe_branch")
    assert fn.startswith("define internal { double, double } @diffe_branch(double %x, double %y) {")
    assert "%pidx$0 = phi i32 [ 0, %then ], [ 1, %else ]" in function_block(fn, "join")
    rev = function_block(fn, "rev$join")
    assert re.search(r"switch i32 %\S+, label %rev\$join\$from\$then \[ i32 1, label %rev\$join\$from\$else \]", rev)
    assert re.search(r"insertvalue \{ double, double \} %agg\$\d+, double %\S+, 1", function_block(fn, "exit$"))


def test_store_reverses_to_read_and_consume_the_shadow():
    out = differentiate("""
define double @use(ptr %o, ptr %do, double %x) {
entry:
  %r = call double (ptr, ...) @__enzyme_autodiff(ptr @scale, ptr @enzyme_dup, ptr %o, ptr %do, double %x)
  ret double %r
}
""")
    fn = function_body(out, "diffe_scale")
    assert "%q$sh = getelementptr inbounds double, ptr %out$sh, i64 1" in function_block(fn, "entry")
    rev = function_block(fn, "rev$entry")
    # dv += *out'; *out' = 0 (the output adjoint is consumed), then d(3x) = 3
    assert re.search(r"%ds\$\d+ = load double, ptr %q\$sh\n  store double 0x0000000000000000, ptr %q\$sh\n", rev)
    assert re.search(r"fmul double %\S+, 3\.0\n", rev)
    # the store is undone for the reverse sweep and redone at its end (what the caller sees)
    assert "%q$old$0 = load double, ptr %q" in function_block(fn, "entry")
    assert "store double %q$old$0, ptr %q" in rev and rev.rstrip().endswith("store double %s, ptr %q\n  br label %exit$")


def test_derived_callee_is_shared_by_both_calls():
    out = differentiate("""
define double @use(double %x) {
entry:
  %r = call double (ptr, ...) @__enzyme_autodiff(ptr @outer, double %x)
  ret double %r
}
""")
    fn = function_body(out, "diffe_outer")
    assert len(re.findall(r"call double @augmented_square\(double %\S+, ptr %tape\$\)", fn)) == 2
    assert len(re.findall(r"call double @reverse_square\(double %\S+, double \S+, ptr %tape\$\)", fn)) == 2
    assert out.count("define internal double @augmented_square(") == 1
    assert out.count("define internal double @reverse_square(") == 1
    # reverse order: the second call's adjoint is taken first
    calls = re.findall(r"@reverse_square\(double (%\S+),", fn)
    assert calls == ["%a", "%x"] or len(calls) == 2 and calls[0] != "%x", calls


def test_split_pieces_share_the_tape_layout():
    out = differentiate("""
define double @use(ptr %v, ptr %dv, i64 %n) {
entry:
  %t = call ptr (ptr, ...) @__enzyme_augmentfwd(ptr @sinloop, ptr @enzyme_dup, ptr %v, ptr %dv, ptr @enzyme_const, i64 %n)
  %z = call double (ptr, ...) @__enzyme_reverse(ptr @sinloop, ptr @enzyme_dup, ptr %v, ptr %dv, ptr @enzyme_const, i64 %n, double 1.0, ptr %t)
  ret double %z
}
""")
    aug, rev = fold_strides(function_body(out, "augmented_sinloop")), fold_strides(function_body(out, "reverse_sinloop"))
    assert aug.startswith("define internal double @augmented_sinloop(ptr %v, ptr %v$sh, i64 %n, ptr noalias %tape$)")
    assert rev.startswith("define internal void @reverse_sinloop(ptr %v, ptr %v$sh, i64 %n, double %dret$, "
                          "ptr noalias %tape$)")
    # the user may change v between the calls: x is taped too, and sin's operand x * s is
    # rebuilt from the kept x and s (two doubles per iteration)
    assert re.search(r"%tb\$\d+ = mul i64 %tc\$\d+, 16\n  %static\.off\$0 = call i64 @__enzyme_build_tape_frame", aug)
    assert re.search(r"%tb\$\d+ = mul i64 %tc\$\d+, 16\n  call ptr @__enzyme_build_tape_pop", rev)
    assert "store double %x, ptr %scell$" in aug and "store double %m, ptr %scell$" not in aug
    assert re.search(r"%r\$\d+ = fmul double %r\$\d+, %r\$\d+", function_block(rev, "rev$loop"))
    # the frame record: pushed last by the augmented piece, popped first by the reverse piece
    assert re.search(r"%frame\.offset\$ = call i64 @__enzyme_build_tape_frame\(ptr %tape\$, i64 8\)", aug)
    assert re.search(r"call ptr @__enzyme_build_tape_push\(ptr %tape\$, i64 8\)\n  store i64 %frame\.offset\$",
                     function_block(aug, "exit"))
    assert re.search(r"%pop\$\d+ = call ptr @__enzyme_build_tape_pop\(ptr %tape\$, i64 8\)\n"
                     r"  %frame\.offset\$ = load i64", function_block(rev, "entry$"))
    use = function_body(out, "use")
    assert re.search(r"call ptr @__enzyme_build_tape_new\(\)", use)
    assert re.search(r"call double @augmented_sinloop\(ptr %v, ptr %dv, i64 %n, ptr %enzyme\$call\d+\)", use)
    assert re.search(r"call void @reverse_sinloop\(ptr %v, ptr %dv, i64 %n, double 1\.0\S*, ptr %t\)", use)
    assert "call void @free(ptr %t)" in use


@pytest.mark.parametrize("kept", [False, True])
def test_not_overwritten_argument_is_reread_in_split_mode(kept):
    marker = "ptr @enzyme_not_overwritten, " if kept else ""
    out = differentiate(f"""
@enzyme_not_overwritten = external global i32
define double @use(ptr %v, ptr %dv, i64 %n) {{
entry:
  %t = call ptr (ptr, ...) @__enzyme_augmentfwd(ptr @sinloop, {marker}ptr @enzyme_dup, ptr %v, ptr %dv, ptr @enzyme_const, i64 %n)
  %z = call double (ptr, ...) @__enzyme_reverse(ptr @sinloop, {marker}ptr @enzyme_dup, ptr %v, ptr %dv, ptr @enzyme_const, i64 %n, double 1.0, ptr %t)
  ret double %z
}}
""")
    aug = next(fold_strides(function_body(out, m.group(1)))
               for m in re.finditer(r"define internal double @(augmented_sinloop\S*)\(", out))
    assert ("store double %x, ptr %scell$" in aug) is not kept
    stride = 16   # kept: x * s and s; not kept: x and s (x * s rebuilt from them)
    assert re.search(rf"%tb\$\d+ = mul i64 %tc\$\d+, {stride}\n  %static\.off\$0 = call i64 @__enzyme_build_tape_frame",
                     aug), aug


def test_marker_globals_become_weak_definitions():
    out = differentiate("""
define double @use(double %x) {
entry:
  %r = call double (ptr, ...) @__enzyme_autodiff(ptr @square, double %x)
  ret double %r
}
""")
    assert "@enzyme_dup = weak global i32 0" in out
    assert "@enzyme_dup = external global i32" not in out


def test_optimized_gradient_of_a_square_is_two_x():
    """After O2 diffe_square is x + x (the slot's -0.0 start folds away; the + 0.0 that makes
    a returned zero gradient +0.0 stays): slots promoted, the call inlined."""
    out = differentiate("""
define double @use(double %x) {
entry:
  %r = call double (ptr, ...) @__enzyme_autodiff(ptr @square, double %x)
  ret double %r
}
""")
    module = llvm.parse_assembly(out, "square")
    llvm.optimize(module, 2)
    use = module.text()[module.text().index("@use("):].split("\n}\n")[0]
    assert "alloca" not in use and "call" not in use
    assert len(re.findall(r"= fadd reassoc double %x, %x\n", use)) == 1, use   # the accumulation
    assert len(re.findall(r"= fadd double ", use)) == 1, use   # the + 0.0


def test_primal_block_named_exit_keeps_its_own_reverse_block():
    """A block `exit` (a C label `exit:` with names kept) reverses to `rev$exit`; the sweep's
    own last block is `exit$`, so the two never collide (they did: invalid IR)."""
    out = differentiate("""
define void @use(ptr %v, ptr %dv, i64 %n) {
entry:
  call void (ptr, ...) @__enzyme_autodiff_void(ptr @sumsq, ptr @enzyme_dup, ptr %v, ptr %dv, ptr @enzyme_const, i64 %n)
  ret void
}
""")
    fn = function_body(out, "diffe_sumsq")
    assert fn.count("\nrev$exit:\n") == 1 and fn.count("\nexit$:\n") == 1
    assert "br label %exit$" in function_block(fn, "rev$entry")


def test_derived_functions_inherit_target_and_fp_attributes():
    """A derived function gets its primal's target CPU, features and floating-point model
    (a -march=x86-64-v3 program's derivatives use AVX too, and the primal's helpers, which
    carry those features, can be inlined into them), and `noinline` (a function kept out of
    line keeps its derivatives out of line); nothing else of the primal's group (memory
    effects) comes along."""
    out = differentiate_module("""
define double @sq(double %x) #0 {
entry:
  %m = fmul double %x, %x
  ret double %m
}
define double @use(double %x) {
entry:
  %r = call double (ptr, ...) @__enzyme_autodiff(ptr @sq, double %x)
  %t = call double (ptr, ...) @__enzyme_fwddiff(ptr @sq, double %x, double 1.0)
  ret double %r
}
declare double @__enzyme_autodiff(ptr, ...)
declare double @__enzyme_fwddiff(ptr, ...)
attributes #0 = { noinline nounwind memory(none) "target-cpu"="x86-64-v3" "target-features"="+avx,+avx2,+fma" "no-trapping-math"="true" }
""")
    llvm.verify(llvm.parse_assembly(out, "attrs"), generated=True)
    groups = dict(re.findall(r"^attributes (#\d+) = (\{.*\})$", out, re.M))
    for name in ("diffe_sq", "fwddiffe_sq"):
        m = re.search(r"^define internal [^@]*@" + name + r"\(.*\) (#\d+) \{$", out, re.M)
        assert m, out
        body = groups[m.group(1)]
        assert '"target-cpu"="x86-64-v3"' in body and '"target-features"="+avx,+avx2,+fma"' in body
        assert '"no-trapping-math"="true"' in body
        assert "memory(" not in body and "nounwind" not in body and "noinline" in body.split()


def test_derivative_arithmetic_carries_the_primal_fast_math_flags():
    """The derivative of `fmul fast` is computed with `fast` (reverse and forward), so a
    -ffast-math program's adjoint sums may be reassociated and vectorized; the derivative of
    an instruction without flags gets none (flags never leak from one instruction to another)."""
    out = differentiate_module("""
define double @g(double %x, double %y) {
entry:
  %a = fmul fast double %x, %y
  %b = fmul double %a, %x
  %c = fmul reassoc nsz double %b, %a
  %d = fmul double %c, %y
  ret double %d
}
define double @use(double %x, double %y) {
entry:
  %r = call { double, double } (ptr, ...) @__enzyme_autodiff(ptr @g, double %x, double %y)
  %t = call double (ptr, ...) @__enzyme_fwddiff(ptr @g, double %x, double 1.0, double %y, double 0.0)
  ret double %t
}
declare { double, double } @__enzyme_autodiff(ptr, ...)
declare double @__enzyme_fwddiff(ptr, ...)
""")
    llvm.verify(llvm.parse_assembly(out, "fmf"), generated=True)
    rev = function_block(function_body(out, "diffe_g"), "rev$entry")
    # the partials of c = b * a: reassoc nsz; of b = a * x: plain; of a = x * y: fast
    assert re.search(r"= fmul reassoc nsz double ", rev), rev
    assert re.search(r"= fmul fast double %\S+, %y\n", rev) and re.search(r"= fmul fast double %\S+, %x\n", rev), rev
    assert re.search(r"= fmul double %\S+, %x\n", rev), rev     # b's partial w.r.t. a: no flags
    fwd = function_body(out, "fwddiffe_g")
    assert re.search(r"%a\$t = fadd fast double", fwd) or re.search(r"= fmul fast double", fwd), fwd
    assert re.search(r"%c\$t = fadd reassoc nsz double", fwd), fwd
    assert re.search(r"%b\$t = fadd double", fwd), fwd


def test_x_sqrt_x_and_reciprocals_reverse_without_division():
    """A force law's 1 / (r2 sqrt(r2)) reverses with no division and no square root: the
    fused rule gives d(r2 sqrt r2) = 1.5 sqrt(r2) dr2 (the sqrt's own rule, 0.5 / sqrt, is
    not applied: nothing else reaches its adjoint), and the reciprocal's denominator partial
    is -q * q, not -q / d. A quotient with another numerator keeps its division."""
    out = differentiate("""
define double @inv3(double %r2) {
entry:
  %s = call double @llvm.sqrt.f64(double %r2)
  %t = fmul double %r2, %s
  %q = fdiv double 1.0, %t
  ret double %q
}
define double @ratio(double %a, double %d) {
entry:
  %q = fdiv double %a, %d
  ret double %q
}
declare double @llvm.sqrt.f64(double)
define double @use(double %x) {
entry:
  %r = call double (ptr, ...) @__enzyme_autodiff(ptr @inv3, double %x)
  ret double %r
}
define { double, double } @use2(double %a, double %d) {
entry:
  %r = call { double, double } (ptr, ...) @__enzyme_autodiff(ptr @ratio, double %a, double %d)
  ret { double, double } %r
}
""")
    diffe = function_body(out, "diffe_inv3")
    reverse = diffe[diffe.index("rev$"):]
    assert "fdiv" not in reverse and "sqrt" not in reverse, diffe
    assert re.search(r"fmul double (1\.500000e\+00|0x3FF8000000000000), %s\b", reverse), diffe
    assert re.search(r"fmul double %q, %q\b", reverse), diffe
    assert "fdiv" in function_body(out, "diffe_ratio").split("rev$", 1)[1]
    module = llvm.parse_assembly(out, "inv3")
    llvm.optimize(module, 2)
    use = module.text()[module.text().index("@use("):].split("\n}\n")[0]
    assert len(re.findall(r"= fdiv ", use)) == 1 and len(re.findall(r"sqrt", use)) == 1, use


def test_quotient_of_two_active_values_divides_once_in_reverse():
    """q = a / b with a and b active: the partials are 1/b and -q * (1/b), the same `fdiv 1, b`
    written twice, which LLVM's CSE merges -- one division in the reverse sweep, not two
    (`1 / b` and `q / b`); the optimized gradient has the primal's and that one (it had 3)."""
    out = differentiate("""
define double @quot(double %a, double %b) {
entry:
  %q = fdiv double %a, %b
  %s = call double @llvm.sin.f64(double %q)
  ret double %s
}
define { double, double } @use(double %a, double %b) {
entry:
  %r = call { double, double } (ptr, ...) @__enzyme_autodiff_pair(ptr @quot, double %a, double %b)
  ret { double, double } %r
}
""")
    rev = function_block(function_body(out, "diffe_quot"), "rev$entry")
    assert len(re.findall(r"= fdiv double 0x3FF0000000000000, %b$", rev, re.M)) == 2, rev
    assert not re.search(r"= fdiv double %q, %b$", rev, re.M), rev
    module = llvm.parse_assembly(out, "quot")
    llvm.optimize(module, 2)
    assert function_body(module.text(), "use").count(" fdiv ") == 2   # (the gradient is inlined there)


def test_a_slot_is_loaded_and_stored_once_per_block_however_many_contributions(tmp_path):
    """Within one block's reverse, an adjoint slot is read at most once and written at most
    once: the contributions are summed in registers, the sum stored at the last one (a store
    that nothing read before the next is dropped), and the block that takes the adjoint reads
    it back from the slot."""
    out = differentiate("""
define double @use(double %x) {
entry:
  %r = call double (ptr, ...) @__enzyme_autodiff(ptr @fanout, double %x)
  ret double %r
}
""")
    fn = function_body(out, "diffe_fanout")
    rev = function_block(fn, "rev$next")
    assert len(re.findall(r"= load double, ptr %a\$d", rev)) == 1, rev
    assert len(re.findall(r"store double %\S+, ptr %a\$d", rev)) == 1, rev
    assert len(re.findall(r"= fadd reassoc double %da\$\d+, ", rev)) == 4, rev   # b = a*a twice, d, e
    entry = function_block(fn, "rev$entry")
    assert re.search(r"%dr\$\d+ = load double, ptr %a\$d", entry), entry
    # e = (a*a + a) * a with a = 2x: de/dx = 2 (3a^2 + 2a); at x = 1.5 (a = 3): 2 * 33 = 66
    (tmp_path / "fanout.ll").write_text(out)
    (tmp_path / "main.c").write_text('#include <stdio.h>\ndouble use(double);\n'
                                     'int main(void) { printf("%.17g\\n", use(1.5)); return 0; }\n')
    subprocess.run(toolchain.clang_command() + ["-O0", "-w", str(tmp_path / "fanout.ll"), str(tmp_path / "main.c"),
                                                "-o", str(tmp_path / "fanout"), "-lm"], check=True, capture_output=True)
    assert float(subprocess.run([str(tmp_path / "fanout")], capture_output=True, text=True).stdout) == 66.0
