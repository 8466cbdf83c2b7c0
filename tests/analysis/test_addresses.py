"""The address analysis on its own (analysis/addresses.py): GEP chains as affine byte offsets,
the extent of heap blocks reached through phis, and pointers that never name the same object
(two buffers swapped every iteration), through its printer and its queries."""
from __future__ import annotations

from enzyme_build.analysis.addresses import (Affine, affine_address, allocation_extent, never_same,
                                             print_addresses)
from enzyme_build.ir import parse_module

PING_PONG = """
%struct.p = type { double, i32, [3 x double] }
define double @f(i64 %n, i32 %k, ptr %arg) {
entry:
  %bytes = shl i64 %n, 3
  %a = call ptr @malloc(i64 %bytes)
  %b = call ptr @malloc(i64 %bytes)
  %c = call ptr @malloc(i64 16)
  br label %step
step:
  %u = phi ptr [ %a, %entry ], [ %next, %step.end ]
  %next = phi ptr [ %b, %entry ], [ %u, %step.end ]
  %s = phi i32 [ 0, %entry ], [ %s.next, %step.end ]
  %r = phi ptr [ %a, %entry ], [ %b, %step.end ]
  br label %point
point:
  %i = phi i64 [ 1, %step ], [ %i.next, %point ]
  %j = phi i32 [ 0, %step ], [ %j.next, %point ]
  %left = getelementptr inbounds double, ptr %u, i64 %i
  %l1 = getelementptr i8, ptr %left, i64 -8
  %x1 = load double, ptr %l1, align 8
  %i.next = add nuw nsw i64 %i, 1
  %pr = getelementptr inbounds double, ptr %u, i64 %i.next
  %x2 = load double, ptr %pr, align 8
  %j.next = add nsw i32 %j, 2
  %jx = sext i32 %j.next to i64
  %pj = getelementptr inbounds [4 x double], ptr %u, i64 %jx, i64 3
  %x3 = load double, ptr %pj, align 8
  %pf = getelementptr inbounds %struct.p, ptr %arg, i64 %i, i32 2, i64 1
  %x4 = load double, ptr %pf, align 8
  %row = mul i64 %i, %n
  %pm = getelementptr inbounds double, ptr %u, i64 %row
  %x5 = load double, ptr %pm, align 8
  %v = fadd double %x1, %x2
  %pn = getelementptr inbounds double, ptr %next, i64 %i
  store double %v, ptr %pn, align 8
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %step.end, label %point
step.end:
  %s.next = add nuw nsw i32 %s, 1
  %fin = icmp eq i32 %s.next, %k
  br i1 %fin, label %exit, label %step
exit:
  ret double 0.0
}
declare ptr @malloc(i64)
"""


def _fn():
    module = parse_module(PING_PONG)
    return module, module.functions["f"]


def test_printer_shows_affine_offsets_and_extents():
    module, fn = _fn()
    text = print_addresses(fn, module)
    assert "point: load %x1 at %u + -8 + 8*%i" in text, text
    assert "point: load %x2 at %u + 8 + 8*%i" in text, text
    # [4 x double] rows: 32 bytes per row index, the sign-extended `j + 2` split into its parts
    assert "point: load %x3 at %u + 88 + 32*sext(%j)" in text, text
    # a struct of 40 bytes (the array after a double and an i32 starts at 16), element 1 of it
    assert "point: load %x4 at %arg + 24 + 40*%i" in text, text
    # a product of two values is a term of its own
    assert "point: load %x5 at %u + 8*%row" in text, text
    assert "point: store store at %next + 8*%i" in text, text
    assert "%u: a heap block of %bytes bytes" in text and "%next: a heap block of %bytes bytes" in text, text


def test_extent_needs_one_size_for_every_way_in():
    module, fn = _fn()
    assert allocation_extent(fn, "%u") == "%bytes"
    assert allocation_extent(fn, "%c") == "16"
    assert allocation_extent(fn, "%arg") is None               # a parameter: its size is the caller's
    sized_apart = PING_PONG.replace("%b = call ptr @malloc(i64 %bytes)", "%b = call ptr @malloc(i64 %n)")
    fn2 = parse_module(sized_apart).functions["f"]
    assert allocation_extent(fn2, "%u") is None


def test_swapped_buffers_never_name_the_same_block():
    module, fn = _fn()
    private = {"%a", "%b", "%c"}
    assert never_same(fn, "%pn", "%u", private)           # next vs u: they trade places every step
    assert never_same(fn, "%u", "%c", private)            # different allocations
    assert not never_same(fn, "%r", "%u", private)        # r is a or b, not tied to u
    assert not never_same(fn, "%pn", "%next", private)    # the same buffer
    # an allocation that may be the caller's memory proves nothing
    assert not never_same(fn, "%pn", "%u", {"%c"})
    assert not never_same(fn, "%arg", "%u", set())
    assert never_same(fn, "%arg", "%u", private)          # a parameter cannot point into a private block


def test_affine_shift_and_rename():
    a = Affine("%p", 8, ((("v", "%i"), 8),))
    assert a.shifted(("v", "%i"), 1) == Affine("%p", 0, ((("v", "%i"), 8),))
    assert a.with_term(("v", "%i"), ("v", "%k")) == Affine("%p", 8, ((("v", "%k"), 8),))
    module, fn = _fn()
    assert affine_address(fn, module, "%pr") == a.__class__("%u", 8, ((("v", "%i"), 8),))


ROTATION = """
define void @g(i64 %n, i32 %k) {
entry:
  %a = call ptr @malloc(i64 %n)
  %b = call ptr @malloc(i64 %n)
  %c = call ptr @malloc(i64 %n)
  br label %step
step:
  %prev = phi ptr [ %a, %entry ], [ %cur, %step ]
  %cur = phi ptr [ %b, %entry ], [ %next, %step ]
  %next = phi ptr [ %c, %entry ], [ %prev, %step ]
  %odd = phi ptr [ %a, %entry ], [ %cur, %step ]
  %s = phi i32 [ 0, %entry ], [ %s1, %step ]
  %s1 = add i32 %s, 1
  %fin = icmp eq i32 %s1, %k
  br i1 %fin, label %exit, label %step
exit:
  ret void
}
declare ptr @malloc(i64)
"""


def test_three_rotated_buffers_never_name_the_same_block():
    fn = parse_module(ROTATION).functions["g"]
    private = {"%a", "%b", "%c"}
    assert never_same(fn, "%prev", "%cur", private) and never_same(fn, "%cur", "%next", private)
    assert never_same(fn, "%next", "%prev", private)
    # a phi that copies one of them without being rotated with them proves nothing
    assert not never_same(fn, "%odd", "%prev", private)
