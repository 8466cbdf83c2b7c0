"""IR in, IR out: what fwddiffe_<f> looks like for small hand-written functions (the loop's
tangent phi, lanes in vector mode, shadow GEPs and stores), verified by LLVM."""
from __future__ import annotations

import re

from enzyme_build import llvm
from enzyme_build.ad.driver import differentiate_module

POWER = """
define double @power(double %x, i32 %n) {
entry:
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i.next, %loop ]
  %acc = phi double [ 1.0, %entry ], [ %acc.next, %loop ]
  %acc.next = fmul double %acc, %x
  %i.next = add i32 %i, 1
  %c = icmp slt i32 %i.next, %n
  br i1 %c, label %loop, label %exit
exit:
  ret double %acc.next
}

define void @store_sq(ptr %p, double %x) {
entry:
  %q = getelementptr inbounds double, ptr %p, i64 1
  %s = fmul double %x, %x
  store double %s, ptr %q, align 8
  ret void
}

@enzyme_width = external global i32
@enzyme_dup = external global i32
declare double @__enzyme_fwddiff(ptr, ...)
declare void @__enzyme_fwddiff_void(ptr, ...)
declare { double, double } @__enzyme_fwddiff2(ptr, ...)
"""


def _differentiate(caller: str) -> str:
    out = differentiate_module(POWER + caller)
    llvm.verify(llvm.parse_assembly(out, "forward-ir"), generated=True)
    return out


def test_loop_gets_a_tangent_phi():
    out = _differentiate("""
define double @use(double %x) {
entry:
  %r = call double (ptr, ...) @__enzyme_fwddiff(ptr @power, double %x, double 1.0, i32 3)
  ret double %r
}
""")
    assert "define internal { double, double } @fwddiffe_power(double %x, double %x$t, i32 %n)" in out
    assert "%acc$t = phi double [ 0x0000000000000000, %entry ], [ %acc.next$t, %loop ]" in out
    # d(acc * x) = x * dacc + acc * dx
    body = out[out.index("@fwddiffe_power("):]
    assert "%acc.next$t = fadd double" in body
    assert "ret { double, double }" in body


def test_vector_mode_has_one_tangent_per_lane():
    out = _differentiate("""
define { double, double } @use(double %x) {
entry:
  %r = call { double, double } (ptr, ...) @__enzyme_fwddiff2(ptr @power, ptr @enzyme_width, i32 2, double %x, double 1.0, double 2.0, i32 3)
  ret { double, double } %r
}
""")
    assert ("define internal { double, double, double } @fwddiffe_power(double %x, double %x$t0, "
            "double %x$t1, i32 %n)") in out
    assert "%acc$t0 = phi double" in out and "%acc$t1 = phi double" in out
    assert "%acc$t = phi" not in out


def test_store_writes_the_tangent_through_the_shadow():
    out = _differentiate("""
define void @use(ptr %p, ptr %dp, double %x) {
entry:
  call void (ptr, ...) @__enzyme_fwddiff_void(ptr @store_sq, ptr @enzyme_dup, ptr %p, ptr %dp, double %x, double 1.0)
  ret void
}
""")
    body = out[out.index("@fwddiffe_store_sq("):]
    assert "define internal void @fwddiffe_store_sq(ptr %p, ptr %p$sh, double %x, double %x$t)" in out
    assert "%q$sh = getelementptr inbounds double, ptr %p$sh, i64 1" in body
    assert "store double %s$t, ptr %q$sh, align 8" in body


def test_x_times_sqrt_x_needs_no_division():
    """d(x sqrt x) = 1.5 sqrt(x) dx: the fused rule replaces the product rule and sqrt's
    0.5 / sqrt(x) (a division per pair in an n-body force loop); after O2 no fdiv is left."""
    out = _differentiate("""
define double @p32(double %x) {
entry:
  %s = call double @llvm.sqrt.f64(double %x)
  %t = fmul double %s, %x
  ret double %t
}
declare double @llvm.sqrt.f64(double)
define double @use(double %x) {
entry:
  %r = call double (ptr, ...) @__enzyme_fwddiff(ptr @p32, double %x, double 1.0)
  ret double %r
}
""")
    body = out[out.index("define internal { double, double } @fwddiffe_p32("):].split("\n}\n")[0]
    assert re.search(r"fmul double (1\.500000e\+00|0x3FF8000000000000), %s", body), body
    module = llvm.parse_assembly(out, "fused")
    llvm.optimize(module, 2)
    optimized = module.text()   # the derived function is inlined into @use by now
    use = optimized[optimized.index("@use("):].split("\n}\n")[0]
    assert "sqrt" in use and "fdiv" not in use


def test_quotients_share_the_reciprocal():
    """d(a/b) = da * (1/b) - (a/b) * (1/b) * db: one reciprocal per denominator, shared by
    every quotient over it (normalizing a vector by its norm divides nothing per element)."""
    out = _differentiate("""
define double @two(double %a, double %c, double %b) {
entry:
  %q1 = fdiv double %a, %b
  %q2 = fdiv double %c, %b
  %s = fadd double %q1, %q2
  ret double %s
}
define double @use(double %a, double %c, double %b) {
entry:
  %r = call double (ptr, ...) @__enzyme_fwddiff(ptr @two, double %a, double 1.0, double %c, double 2.0, double %b, double 3.0)
  ret double %r
}
""")
    fwd = out[out.index("define internal { double, double } @fwddiffe_two("):].split("\n}\n")[0]
    divisions = re.findall(r"= fdiv double ([^,]+), (\S+)", fwd)
    tangent_divisions = [d for d in divisions if d not in (("%a", "%b"), ("%c", "%b"))]
    # identical reciprocals, which any CSE merges into one (the optimizer does)
    assert tangent_divisions and set(tangent_divisions) == {("0x3FF0000000000000", "%b")}, fwd


def test_sqrt_shares_the_reciprocal_with_a_quotient_by_it():
    """sqrt's partial is 0.5 * (1 / sqrt(x)) (equal to 0.5 / sqrt(x) bit for bit), the very
    reciprocal a quotient by sqrt(x) needs: Rodrigues' rot / theta with theta = sqrt(...)
    then divides once for both. After O2: the primal quotient and one reciprocal."""
    out = _differentiate("""
define double @unit(double %a, double %x) {
entry:
  %s = call double @llvm.sqrt.f64(double %x)
  %q = fdiv double %a, %s
  ret double %q
}
declare double @llvm.sqrt.f64(double)
define double @use(double %a, double %x) {
entry:
  %r = call double (ptr, ...) @__enzyme_fwddiff(ptr @unit, double %a, double 1.0, double %x, double 2.0)
  ret double %r
}
""")
    module = llvm.parse_assembly(out, "unit")
    llvm.optimize(module, 2)
    optimized = module.text()
    use = optimized[optimized.index("@use("):].split("\n}\n")[0]
    # divisions counted by lanes (the optimizer may pair them into one <2 x double> fdiv)
    lanes = sum(int(w) if w else 1 for w in re.findall(r"= fdiv (?:<(\d+) x )?double", use))
    assert lanes == 2, use
