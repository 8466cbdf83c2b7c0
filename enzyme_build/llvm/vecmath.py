"""Vector math libraries of the final pipeline: what LLVM 22 calls, and glibc's libmvec.

Facts only (no llvmlite import); link/wholeprogram.py decides when a library is used
(docs/build-performance.md, "Vector math").
"""
from __future__ import annotations

# clang's -fveclib= values and the -vector-library= names of LLVM 22's tools (None: no
# library). clang rejects other values when it compiles.
CLANG_TO_LLVM = {
    "none": None, "libmvec": "LIBMVEC", "Accelerate": "Accelerate", "MASSV": "MASSV",
    "SVML": "SVML", "SLEEF": "sleefgnuabi", "Darwin_libsystem_m": "Darwin_libsystem_m",
    "ArmPL": "ArmPL", "AMDLIBM": "AMDLIBM",
}
LIBMVEC = "LIBMVEC"

# Every function LLVM 22 may call with -vector-library=LIBMVEC on x86-64 (its VecFuncs.def
# table, read back with `opt -passes=inject-tli-mappings`; tests/llvm/test_vecmath.py checks
# it against the installed opt). `b`: SSE2 variants (128-bit, every x86-64), `d`: AVX2
# variants (256-bit), used only in functions whose target features allow them. glibc has had
# sin, cos, exp, log, pow since 2.22 and tan since 2.35.
_SCALAR = ("cos", "exp", "log", "sin", "tan")
LIBMVEC_X86_64 = frozenset(
    [f"_ZGVbN2v_{f}" for f in _SCALAR] + ["_ZGVbN2vv_pow"]
    + [f"_ZGVbN4v_{f}f" for f in _SCALAR] + ["_ZGVbN4vv_powf"]
    + [f"_ZGVdN4v_{f}" for f in _SCALAR] + ["_ZGVdN4vv_pow"]
    + [f"_ZGVdN8v_{f}f" for f in _SCALAR] + ["_ZGVdN8vv_powf"])

# The 128-bit vector intrinsics the in-process pipeline leaves behind, and their SSE2
# libmvec variants: llvmlite's pass builder has no vector library, so its loop vectorizer
# widens llvm.exp.f64 to llvm.exp.v2f64, which code generation would split into two scalar
# calls again. A 128-bit vector travels in an xmm register in every x86-64 function, so
# these calls are legal whatever the function's target features; wider forms are left alone.
SSE_INTRINSICS = {
    **{f"llvm.{f}.v2f64": f"_ZGVbN2v_{f}" for f in _SCALAR},
    **{f"llvm.{f}.v4f32": f"_ZGVbN4v_{f}f" for f in _SCALAR},
    "llvm.pow.v2f64": "_ZGVbN2vv_pow",
    "llvm.pow.v4f32": "_ZGVbN4vv_powf",
}

# What the final link adds when the program object calls libmvec. (Debian's and Ubuntu's
# libm.so and libm.a are linker scripts that name libmvec too; -lmvec does not rely on it.)
LIBMVEC_LINK_FLAGS = ["-lmvec", "-lm"]


def llvm_name(clang_value: str) -> str | None:
    """opt's -vector-library value for clang's -fveclib value (KeyError: not one clang knows)."""
    return CLANG_TO_LLVM[clang_value]


def is_x86_64_glibc(triple: str) -> bool:
    """x86_64-<vendor>-linux-gnu[…]: the targets whose C library ships libmvec."""
    parts = triple.split("-")
    return len(parts) >= 3 and parts[0] == "x86_64" and "linux" in parts[1:3] and parts[-1] == "gnu"


def libmvec_calls(undefined: set[str]) -> set[str]:
    """The libmvec functions among an object's undefined symbols."""
    return undefined & LIBMVEC_X86_64
