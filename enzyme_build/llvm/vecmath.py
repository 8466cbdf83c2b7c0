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
SSE_INTRINSICS = {}   # filled below: "llvm.exp.v2f64": "_ZGVbN2v_exp", …

# What the final link adds when the program object calls libmvec. (Debian's and Ubuntu's
# libm.so and libm.a are linker scripts that name libmvec too; -lmvec does not rely on it.)
LIBMVEC_LINK_FLAGS = ["-lmvec", "-lm"]


# The x86 vector ABI's ISA letters and the target feature each needs in the calling
# function: the argument travels in an xmm (b), ymm (c, d) or zmm (e) register, which a
# function without the feature cannot pass it in.
ISA_FEATURE = {"b": None, "c": "+avx", "d": "+avx2", "e": "+avx512f"}


def legal_isas(function_features: list[str]) -> set[str]:
    """The ISA letters every one of these functions (their "target-features" strings, ""
    for none) may call: b always; c, d, e when all of them have the feature."""
    out = set()
    for isa, feature in ISA_FEATURE.items():
        if feature is None or (function_features
                               and all(feature in f.split(",") for f in function_features)):
            out.add(isa)
    return out


def as_intrinsic(symbol: str) -> str:
    """The vector math intrinsic a libmvec function computes: _ZGVdN4v_exp ->
    llvm.exp.v4f64, _ZGVdN8vv_powf -> llvm.pow.v8f32."""
    head, name = symbol.split("_", 2)[1:]             # "ZGVdN4v", "exp"
    lanes = head[5:].rstrip("v")
    if name.endswith("f") and name[:-1] in _SCALAR + ("pow",):
        return f"llvm.{name[:-1]}.v{lanes}f32"
    return f"llvm.{name}.v{lanes}f64"


def illegal_calls(undefined: set[str], legal: set[str]) -> dict[str, str]:
    """The libmvec functions among an object's undefined symbols that its functions may not
    call (ISA letter not in ``legal``), each with the intrinsic to call instead.

    LLVM 22's vectorizers pick a libmvec variant by its width only: the SLP vectorizer's
    horizontal reductions (four exp() summed under -ffast-math) and the loop vectorizer
    in a float loop that calls a double function (`(float)exp((double)x[i])`, VF 4) call
    _ZGVdN4v_exp from baseline x86-64 code, which passes the <4 x double> in memory while
    the AVX2 variant reads ymm0: wrong results, with plain clang -fveclib=libmvec too."""
    return {s: as_intrinsic(s) for s in libmvec_calls(undefined) if s[4] not in legal}


def llvm_name(clang_value: str) -> str | None:
    """opt's -vector-library value for clang's -fveclib value (KeyError: not one clang knows)."""
    return CLANG_TO_LLVM[clang_value]


def is_x86_64_glibc(triple: str) -> bool:
    """x86_64-[<vendor>-]linux-gnu: the targets whose C library (glibc) ships libmvec."""
    parts = triple.split("-")
    return len(parts) >= 3 and parts[0] == "x86_64" and "linux" in parts[1:3] and parts[-1] == "gnu"


def libmvec_calls(undefined: set[str]) -> set[str]:
    """The libmvec functions among an object's undefined symbols."""
    return undefined & LIBMVEC_X86_64


SSE_INTRINSICS.update({as_intrinsic(s): s for s in sorted(LIBMVEC_X86_64) if s[4] == "b"})
