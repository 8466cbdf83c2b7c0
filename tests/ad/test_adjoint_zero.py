"""Adjoint slots start at -0.0, the identity of fadd, so the first contribution to an adjoint
folds into the contribution itself after optimization; returned adjoints are +0.0 when zero."""
from __future__ import annotations

import re

from enzyme_build import llvm

from ad_helpers import function_body  # noqa: E402
from test_cache_shapes import differentiate  # noqa: E402


SUMSQ = """
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

define double @cube(double %x, double %y) {
entry:
  %a = fmul double %x, %x
  %b = fmul double %a, %x
  ret double %b
}

define void @use_sumsq(ptr %v, ptr %dv, i64 %n) {
entry:
  call void (ptr, ...) @__enzyme_autodiff_void(ptr @sumsq, ptr @enzyme_dup, ptr %v, ptr %dv, ptr @enzyme_const, i64 %n)
  ret void
}

define { double, double } @use_cube(double %x, double %y) {
entry:
  %r = call { double, double } (ptr, ...) @__enzyme_autodiff_pair(ptr @cube, double %x, double %y)
  ret { double, double } %r
}
declare { double, double } @__enzyme_autodiff_pair(ptr, ...)
"""


def test_adjoint_slots_start_at_negative_zero_and_fold_away():
    out = differentiate(SUMSQ)
    fn = function_body(out, "diffe_sumsq")
    # every slot starts (and is reset) at -0.0, the identity of fadd (the loop-carried sum has
    # one; x and sq, used only in their own block, have SSA adjoints and no slot)
    assert re.search(r"%s\$d = alloca double, align 8\n  store double 0x8000000000000000, ptr %s\$d", fn)
    assert "%x$d" not in fn and "%sq$d" not in fn
    # a returned adjoint is normalized to +0.0 when nothing reached it (y does not affect cube)
    cube = function_body(out, "diffe_cube")
    assert len(re.findall(r"= fadd double %ret\$\d+, 0x0000000000000000", cube)) == 2, cube
    # after O2 the reverse loop adds each contribution straight into the shadow: no `x + 0.0`
    module = llvm.parse_assembly(out, "zeros")
    llvm.optimize(module, 2)
    text = module.text()
    assert not re.search(r"fadd double %\S+, 0\.000000e\+00", text), text
