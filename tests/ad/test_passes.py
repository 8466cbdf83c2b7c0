"""The whole-module text passes of the AD stage (enzyme_build/ad/passes.py), IR in and IR out,
each output verified by LLVM."""
from __future__ import annotations

from enzyme_build.ad.passes import (_free_derived_names, _plain_shadow_allocations, lower_threadlocal_addresses,
                                    specialize_callback_arguments)

from ad_helpers import verified


THREADLOCAL = """
@acc = thread_local global double 0.000000e+00, align 8

define void @add(double %x) {
entry:
  %p = call ptr @llvm.threadlocal.address.p0(ptr @acc)
  %old = load double, ptr %p, align 8
  %new = fadd double %old, %x
  store double %new, ptr %p, align 8
  ret void
}
declare ptr @llvm.threadlocal.address.p0(ptr)
"""


def test_lower_threadlocal_addresses():
    out = verified(lower_threadlocal_addresses(verified(THREADLOCAL, "tls-in")), "tls-out")
    assert "%p = call" not in out
    assert "%old = load double, ptr @acc, align 8" in out
    assert "store double %new, ptr @acc, align 8" in out
    assert lower_threadlocal_addresses("define void @f() {\nentry:\n  ret void\n}\n") == \
        "define void @f() {\nentry:\n  ret void\n}\n"


CALLBACK = """
define double @sq(double %x) {
entry:
  %m = fmul double %x, %x
  ret double %m
}

define double @apply(ptr %f, double %x) {
entry:
  %y = call double %f(double %x)
  %z = fadd double %y, %x
  ret double %z
}

@enzyme_const = external global i32
declare double @__enzyme_autodiff(ptr, ...)

define double @grad(double %x) {
entry:
  %r = call double (ptr, ...) @__enzyme_autodiff(ptr @apply, ptr @enzyme_const, ptr @sq, double %x)
  ret double %r
}
"""


def test_specialize_callback_arguments():
    """apply(f, x) with f = @sq: a copy of apply calling @sq directly is differentiated."""
    out = verified(specialize_callback_arguments(verified(CALLBACK, "cb-in")), "cb-out")
    assert '@__enzyme_autodiff(ptr @apply$cb0, ptr @enzyme_const, ptr @sq, double %x)' in out
    clone = out[out.index('define internal double @apply$cb0('):]
    assert "%y = call double @sq(double %x)" in clone
    # functions with rules (or inactive) keep their callback
    assert specialize_callback_arguments(CALLBACK, keep={"apply"}) == CALLBACK


def test_free_derived_names():
    """A second pass names tangents `<name>$t`: the first pass's `$` names are doubled so they
    cannot collide; string constants (printf formats) and metadata are untouched."""
    text = """@fmt = private constant [5 x i8] c"%1$s\\00"
define double @f(double %x, double %x$t) {
entry$:
  %y$d = fmul double %x, %x$t
  ret double %y$d
}
"""
    out = verified(_free_derived_names(verified(text, "names-in")), "names-out")
    assert "define double @f(double %x, double %x$$t) {" in out
    assert "entry$$:" in out and "%y$$d = fmul double %x, %x$$t" in out
    assert 'c"%1$s\\00"' in out


def test_plain_shadow_allocations():
    text = """
define ptr @g(i64 %n) {
entry:
  %sh = call ptr @__enzyme_build_shadow_alloc(i64 %n)
  ret ptr %sh
}
declare ptr @__enzyme_build_shadow_alloc(i64)
"""
    out = verified(_plain_shadow_allocations(text), "shadow-alloc")
    assert "%sh = call ptr @calloc(i64 1, i64 %n)" in out
    assert "declare ptr @calloc(i64, i64)" in out


def test_plain_shadow_releases():
    """The release of a shadow block (to the thread's spares) is a plain free to a next pass."""
    text = """
define void @g(i64 %n) {
entry:
  %sh = call ptr @__enzyme_build_shadow_alloc(i64 %n)
  call void @__enzyme_build_shadow_free(ptr %sh)
  ret void
}
declare ptr @__enzyme_build_shadow_alloc(i64)
declare void @__enzyme_build_shadow_free(ptr)
"""
    out = verified(_plain_shadow_allocations(text), "shadow-free")
    assert "call void @free(ptr %sh)" in out and "declare void @free(ptr)" in out
    assert "call void @__enzyme_build_shadow_free" not in out
