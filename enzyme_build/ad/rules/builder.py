"""What derivative rules are written with: float constants, arithmetic, math calls.

Rules (see table.py) call `Builder` methods; each returns the new value (ir/builder.py makes
the instruction). Both reverse and forward mode use it, so a rule is written once for both.
"""
from __future__ import annotations

import functools
import struct
from typing import Callable

from ...analysis.library import INTRINSIC_MATH, math_arity
from ...ir.builder import IRBuilder

HELPERS = {"digamma": "__enzyme_build_digamma"}
_SUFFIX = {"double": "f64", "float": "f32", "x86_fp80": "f80"}
_LIBM_SUFFIX = {"double": "", "float": "f", "x86_fp80": "l"}


@functools.lru_cache(maxsize=4096)
def float_constant(value: float, fty: str = "double") -> str:
    """LLVM's exact hex spelling of a float constant of type fty."""
    if fty == "float":
        value = struct.unpack("<f", struct.pack("<f", value))[0]
    if fty == "x86_fp80":
        return _fp80_constant(value)
    return "0x%016X" % struct.unpack("<Q", struct.pack("<d", value))[0]


def literal_value(text: str) -> float | None:
    """The value of a scalar float literal as LLVM prints it (`1.000000e+00`, or the 16 hex
    digits of a double, which LLVM also uses for float); None for anything else."""
    if len(text) == 18 and text.startswith("0x"):
        try:
            return struct.unpack("<d", struct.pack("<Q", int(text[2:], 16)))[0]
        except ValueError:
            return None
    if text[:1].isdigit() or text[:1] in "-+" and text[1:2].isdigit():
        try:
            return float(text)
        except ValueError:
            return None
    return None


def _fp80_constant(value: float) -> str:
    """x86 extended precision spelling `0xK<sign+exponent:4><explicit-one mantissa:16>` of a
    double (every double is exact in it)."""
    bits = struct.unpack("<Q", struct.pack("<d", value))[0]
    sign, exp, frac = bits >> 63, (bits >> 52) & 0x7FF, bits & ((1 << 52) - 1)
    if exp == 0 and frac == 0:
        return "0xK%04X%016X" % (sign << 15, 0)
    if exp == 0x7FF:
        return "0xK%04X%016X" % ((sign << 15) | 0x7FFF, (1 << 63) | (frac << 11))
    if exp == 0:   # subnormal double: normalize
        shift = 52 - frac.bit_length() + 1
        frac, exp = (frac << shift) & ((1 << 52) - 1), 1 - shift
    return "0xK%04X%016X" % ((sign << 15) | (exp - 1023 + 16383), (1 << 63) | (frac << 11))


def math_callee(base: str, fty: str) -> tuple[str, str]:
    """(callee '@name', declaration line) for a one- or two-argument math function."""
    params = ", ".join([fty] * math_arity(base))
    if base == "powi":
        name = f"llvm.powi.{_SUFFIX[fty]}.i32"
        params = f"{fty}, i32"
    elif base in HELPERS:
        name = HELPERS[base]
        return f"@{name}", ""  # defined by the engine (ad/tape.py support code)
    elif base in INTRINSIC_MATH:
        name = f"llvm.{base}.{_SUFFIX[fty]}"
    else:
        name = base + _LIBM_SUFFIX[fty]
    return f"@{name}", f"declare {fty} @{name}({params})"


class Builder:
    """The operations derivative rules are written with, for values of float type `fty`.

    Instructions are made by one `IRBuilder` (ir/builder.py) into `into`: a list of model
    instructions, or of text lines for a sweep that still assembles text (`text=True`)."""

    def __init__(self, fty: str, fresh: Callable[[str], str], into: list | None = None, text: bool = False):
        self.fty = fty
        self.ir = IRBuilder(fresh, into, text)
        # fast-math flags of the primal instruction being differentiated: its derivative's
        # arithmetic carries them too (Enzyme's convention), so a -ffast-math program's
        # adjoint sums may be reassociated and vectorized like its own
        self.flags = ""
        self.declarations: dict[str, str] = {}   # callee -> declaration line
        self.helpers: set[str] = set()
        # optional hook (base, fty, args) -> existing value name, set by an engine
        self.reuse: Callable | None = None

    @property
    def made(self) -> list:
        """What the rules made so far (instructions, or lines with `text=True`)."""
        return self.ir.into

    def const(self, value: float) -> str:
        return float_constant(value, self.fty)

    def is_const(self, name: str, value: float) -> bool:
        return name == self.const(value) or literal_value(name) == value

    def fadd(self, a: str, b: str) -> str:
        return self.ir.binop("fadd", self.fty, a, b, self.flags)

    def fsub(self, a: str, b: str) -> str:
        return self.ir.binop("fsub", self.fty, a, b, self.flags)

    def fmul(self, a: str, b: str) -> str:
        if self.is_const(a, 1.0):
            return b
        if self.is_const(b, 1.0):
            return a
        return self.ir.binop("fmul", self.fty, a, b, self.flags)

    def fdiv(self, a: str, b: str) -> str:
        return self.ir.binop("fdiv", self.fty, a, b, self.flags)

    def fneg(self, a: str) -> str:
        return self.ir.fneg(self.fty, a, self.flags)

    def square(self, a: str) -> str:
        return self.fmul(a, a)

    def fcmp(self, pred: str, a: str, b: str) -> str:
        return self.ir.cmp("fcmp", pred, self.fty, a, b)

    def select(self, cond: str, a: str, b: str) -> str:
        return self.ir.select(cond, self.fty, a, b)

    def int_to_float(self, value: str, ity: str) -> str:
        return self.ir.cast("sitofp", ity, value, self.fty)

    def call(self, base: str, *args: str) -> str:
        """A math function of the rule's float type; an integer argument is written typed
        (`"i32 %n"`, powi's exponent)."""
        if self.reuse is not None:   # the primal may already have computed this value
            found = self.reuse(base, self.fty, args)
            if found is not None:
                return found
        callee, decl = math_callee(base, self.fty)
        if decl:
            self.declarations[callee] = decl
        if base in HELPERS:
            self.helpers.add(base)
            if self.fty != "double":  # helpers are written for double
                wide = [self.ir.cast("fpext", self.fty, a, "double") for a in args]
                res = self.ir.call("double", callee, [("double", a) for a in wide])
                return self.ir.cast("fptrunc", "double", res, self.fty)
        typed = [tuple(a.split(" ", 1)) if a.startswith("i32 ") else (self.fty, a) for a in args]
        return self.ir.call(self.fty, callee, typed)
