"""Forward mode on compiled programs, checked against finite differences and closed forms."""
from __future__ import annotations

import re

import pytest


@pytest.mark.parametrize("name,extra", [
    ("math", ()),
    ("math", ("-fno-math-errno",)),     # intrinsics (llvm.sin.f64, frem…) instead of libm calls
    ("control", ()),
    ("memory", ()),
    ("vector", ()),
    ("custom", ()),
    ("patterns", ()),
    ("fused", ()),
    ("fused", ("-fno-math-errno",)),    # llvm.sqrt instead of the libm call
])
def test_programs(build, run_ok, name, extra):
    assert run_ok(build(name + ".c", extra=extra)) > 0


def test_derived_functions_are_shared_and_named(build, run_ok, tmp_path):
    """Call sites with the same (function, activity, width) share one fwddiffe_<f>; other
    widths or activities get their own, deterministically suffixed."""
    assert run_ok(build("vector.c")) > 0
    with open(tmp_path / "keep" / "ad-output.ll") as fh:
        defined = re.findall(r'^define internal \S+(?: \S+)* @(fwddiffe_[^(]+)\(', fh.read(), re.M)
    assert defined.count("fwddiffe_f2") == 1
    assert {"fwddiffe_f2", "fwddiffe_f2.aaw2", "fwddiffe_f2.aaw3", "fwddiffe_f2.aaw4"} <= set(defined)
    # the first signature requested gets the plain name (here width 4), later ones a suffix
    assert {"fwddiffe_layer", "fwddiffe_layer.ddca", "fwddiffe_layer.cdcaw2"} <= set(defined)
    assert {"fwddiffe_helper", "fwddiffe_helper.dca", "fwddiffe_helper.ccaw2"} <= set(defined)
    assert len(defined) == len(set(defined))


def test_cxx_vector_and_new(build, run_ok):
    assert run_ok(build("cxx.cc", extra=("-fno-exceptions",))) > 0


def test_ad_before_opt_and_O0(build, run_ok):
    """The ablation path (only SROA before AD) and -O0 front ends give the same tangents."""
    assert run_ok(build("control.c", ad_before_opt=True)) > 0
    assert run_ok(build("memory.c", opt="-O0")) > 0


@pytest.mark.parametrize("opt,ad_before_opt", [("-O2", False), ("-O0", False), ("-O2", True)])
def test_structs_by_value_in_registers(build, run_ok, opt, ad_before_opt):
    """vec2 arrives as two doubles: value pieces, then tangent pieces, paired as a whole."""
    assert run_ok(build("byvalue.c", opt=opt, ad_before_opt=ad_before_opt)) == 9


@pytest.mark.parametrize("opt,ad_before_opt", [("-O0", False), ("-O2", True)])
def test_std_vector_members_as_calls(build, run_ok, opt, ad_before_opt):
    """operator[], constructors, std::sort and destructors of a local std::vector."""
    assert run_ok(build("stdvec_calls.cc", opt=opt, ad_before_opt=ad_before_opt)) == 3


@pytest.mark.parametrize("opt,ad_before_opt", [("-O2", False), ("-O0", False), ("-O2", True)])
def test_nested_second_derivatives(build, run_ok, opt, ad_before_opt):
    """An AD call inside a differentiated function is rewritten first (innermost first)."""
    assert run_ok(build("nested.c", opt=opt, ad_before_opt=ad_before_opt)) == 58


@pytest.mark.parametrize("ad_before_opt", [False, True])
def test_constant_function_pointer_table(build, run_ok, ad_before_opt):
    assert run_ok(build("fptable.c", ad_before_opt=ad_before_opt)) == 2


@pytest.mark.parametrize("opt,ad_before_opt", [("-O2", False), ("-O0", False), ("-O2", True)])
def test_thread_local_accumulators(build, run_ok, opt, ad_before_opt):
    assert run_ok(build("threadlocal.c", opt=opt, ad_before_opt=ad_before_opt)) == 4


@pytest.mark.parametrize("opt,ad_before_opt", [("-O2", False), ("-O0", False), ("-O2", True)])
def test_callback_arguments(build, run_ok, opt, ad_before_opt):
    assert run_ok(build("callback.c", opt=opt, ad_before_opt=ad_before_opt, extra=("-g",))) == 4


@pytest.mark.parametrize("opt", ["-O2", "-O0"])
def test_statics_keep_no_tangent_between_calls(build, run_ok, opt):
    """A static read before it is written is a constant of each call: the tangent left in
    its tangent global by the previous call is dropped (scalar and vector mode)."""
    assert run_ok(build("statics.c", opt=opt)) == 11
