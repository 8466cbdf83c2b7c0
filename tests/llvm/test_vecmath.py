"""The vector math facts enzyme-build relies on: LLVM 22's libmvec table and the in-process
renaming of vector intrinsics to their SSE2 variants."""
from __future__ import annotations

import re
import subprocess

import pytest

from enzyme_build import llvm
from enzyme_build.llvm import backend, vecmath

SCALAR = ("sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh exp exp2 exp10 expm1 "
          "log log2 log10 log1p cbrt erf erfc lgamma tgamma sqrt").split()
BINARY = ("pow", "atan2", "hypot", "fmod")
INTRINSICS = "sin cos tan asin acos atan sinh cosh tanh exp exp2 exp10 log log2 log10".split()


def every_math_call() -> str:
    """One function calling every libm function and math intrinsic, double and float, none
    of them able to set errno."""
    decls, body = set(), []
    for ty, suffix, isuffix, arg in (("double", "", "f64", "%d"), ("float", "f", "f32", "%f")):
        for name in SCALAR:
            decls.add(f"declare {ty} @{name}{suffix}({ty}) #0")
            body.append(f"call {ty} @{name}{suffix}({ty} {arg}) #0")
        for name in BINARY:
            decls.add(f"declare {ty} @{name}{suffix}({ty}, {ty}) #0")
            body.append(f"call {ty} @{name}{suffix}({ty} {arg}, {ty} {arg}) #0")
        for name in INTRINSICS:
            body.append(f"call {ty} @llvm.{name}.{isuffix}({ty} {arg})")
        for name in ("pow", "atan2"):
            body.append(f"call {ty} @llvm.{name}.{isuffix}({ty} {arg}, {ty} {arg})")
    lines = ['target triple = "x86_64-pc-linux-gnu"', *sorted(decls),
             "define void @t(double %d, float %f) {", *[f"  %r{k} = {b}" for k, b in enumerate(body)],
             "  ret void", "}", "attributes #0 = { nounwind memory(none) }"]
    return "\n".join(lines) + "\n"


@pytest.mark.skipif(not backend.external_tools_enabled(), reason="opt of LLVM 22 not installed")
def test_libmvec_table_is_what_opt_maps(tmp_path):
    """LIBMVEC_X86_64 must list every function opt's -vector-library=LIBMVEC may call: the
    final link adds -lmvec for those, and the default needs the installed libmvec to have
    them all. An LLVM upgrade that changes the table fails here."""
    source = tmp_path / "all.ll"
    source.write_text(every_math_call())
    proc = subprocess.run([backend.find_tool("opt"), "-passes=inject-tli-mappings",
                           "--vector-library=LIBMVEC", str(source), "-S", "-o", "-"],
                          capture_output=True, text=True, check=True)
    # "vector-function-abi-variant"="_ZGV_LLVM_N2v_llvm.exp.f64(_ZGVbN2v_exp),…"
    mapped = set(re.findall(r"\((_ZGV[bcde]N\w+)\)", proc.stdout))
    assert mapped == vecmath.LIBMVEC_X86_64


def test_sse_intrinsics_map_into_the_table():
    assert set(vecmath.SSE_INTRINSICS.values()) <= vecmath.LIBMVEC_X86_64
    assert all(name.startswith("_ZGVb") for name in vecmath.SSE_INTRINSICS.values())


def test_clang_names():
    assert vecmath.llvm_name("libmvec") == "LIBMVEC"
    assert vecmath.llvm_name("none") is None
    with pytest.raises(KeyError):
        vecmath.llvm_name("LIBMVEC")          # clang's spelling is libmvec


def test_rename_declarations_turns_intrinsics_into_calls():
    module = llvm.parse_assembly("""
declare <2 x double> @llvm.exp.v2f64(<2 x double>)
declare <4 x double> @llvm.exp.v4f64(<4 x double>)
declare <2 x double> @llvm.log.v2f64(<2 x double>)
declare <2 x double> @_ZGVbN2v_log(<2 x double>)
define <2 x double> @f(<2 x double> %x, <4 x double> %y) {
  %a = call fast <2 x double> @llvm.exp.v2f64(<2 x double> %x)
  %b = call <4 x double> @llvm.exp.v4f64(<4 x double> %y)
  %c = call <2 x double> @llvm.log.v2f64(<2 x double> %a)
  %d = call <2 x double> @_ZGVbN2v_log(<2 x double> %c)
  ret <2 x double> %d
}
""")
    # llvm.log.v2f64 stays: its new name is taken (a suffixed copy would not link)
    assert llvm.rename_declarations(module, vecmath.SSE_INTRINSICS) == ["_ZGVbN2v_exp"]
    llvm.verify(module)
    text = module.text()
    assert "call fast <2 x double> @_ZGVbN2v_exp(<2 x double> %x)" in text
    assert "@llvm.exp.v4f64(<4 x double> %y)" in text       # 256-bit: left to code generation
    assert "@llvm.log.v2f64(<2 x double> %a)" in text


def test_call_intrinsics_instead_rewrites_the_calls(tmp_path):
    module = llvm.parse_assembly("""
@llvm.compiler.used = appending global [1 x ptr] [ptr @_ZGVdN4v_exp], section "llvm.metadata"
declare <4 x double> @_ZGVdN4v_exp(<4 x double>)
declare <4 x double> @llvm.exp.v4f64(<4 x double>)
define <4 x double> @f(<4 x double> %x) {
  %a = tail call fast <4 x double> @_ZGVdN4v_exp(<4 x double> %x)
  %b = call <4 x double> @llvm.exp.v4f64(<4 x double> %a)
  ret <4 x double> %b
}
""")
    path = tmp_path / "m.bc"
    path.write_bytes(module.bitcode())
    backend.call_intrinsics_instead(str(path), {"_ZGVdN4v_exp": "llvm.exp.v4f64"})
    text = llvm.read_bitcode_file(str(path)).text()
    assert "tail call fast <4 x double> @llvm.exp.v4f64(<4 x double> %x)" in text
    assert "call <4 x double> @_ZGVdN4v_exp" not in text
    assert "declare <4 x double> @_ZGVdN4v_exp(<4 x double>)" in text   # still in compiler.used
