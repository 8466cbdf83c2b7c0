"""Partial-derivative rules shared by reverse and forward mode.

Each rule gives d(result)/d(operand_i) as a function `(b, x) -> value name or None`:
`b` is a `Builder` for the operation's float type, `x[i]` the i-th operand (fetched
lazily, so a rule that never reads an operand never caches it) and `x.result` the
primal result. None means the partial is zero. Reverse mode multiplies the result's
adjoint by each partial; forward mode sums partial_i * tangent_i.

`MATH_RULES` covers LLVM intrinsics and libm by base name; `math_rule(callee)` maps a
spelling (`sin`, `sinf`, `llvm.sin.f64`) to (rule, float type). `INSTRUCTION_RULES`
covers the arithmetic instructions. select, phi, fpext/fptrunc, loads and stores are
structural and handled by the engines themselves.
"""
from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from typing import Callable

from ...analysis.library import INTRINSIC_ONLY
from .builder import Builder

Partial = Callable[[Builder, "object"], "str | None"]


@dataclass(frozen=True)
class Rule:
    names: tuple[str, ...]          # base spellings covered
    partials: tuple[Partial, ...]   # one per operand
    # forward mode only, per operand (None: partial * tangent): the operand's term built from
    # its tangent t as `(b, x, t) -> value`, for a partial that can overflow to infinity where
    # the product with the tangent cannot (a zero tangent then gives 0, not inf * 0 = NaN)
    terms: tuple = ()


def _zero(b, x):
    return None


def _one(b, x):
    return b.const(1.0)


# ---------------------------------------------------------------- instructions
def _fdiv_denominator(b, x):
    """The partial of q = a / b w.r.t. b, -q / b. For a reciprocal (a = 1) it is -q * q, a
    product instead of a division (1 / r, 1 / |v|, 1 / (r2 sqrt(r2)) in force laws and
    normalizations). Otherwise -q * (1/b) when q is at hand; when the reverse sweep would
    have to divide again (or keep q) but has a for free (`in[i] / m`: a re-read input),
    -(a * (1/b)) * (1/b): two products and the reciprocal the numerator's partial needs
    anyway (hoisted when b is invariant), no second division per quotient."""
    if b.is_const(x.raw(0), 1.0):
        return b.fneg(b.square(x.result))
    if not x.result_at_hand() and x.costless(0):
        recip = b.fdiv(b.const(1.0), x[1])   # CSE'd with the numerator's partial
        return b.fneg(b.fmul(b.fmul(x[0], recip), recip))
    return b.fneg(b.fmul(x.result, b.fdiv(b.const(1.0), x[1])))


INSTRUCTION_RULES: dict[str, Rule] = {
    "fadd": Rule(("fadd",), (_one, _one)),
    "fsub": Rule(("fsub",), (_one, lambda b, x: b.const(-1.0))),
    "fmul": Rule(("fmul",), (lambda b, x: x[1], lambda b, x: x[0])),
    # the denominator's partial -q/b as -q * (1/b) or -(a * (1/b)) * (1/b): the same reciprocal
    # as the numerator's partial, one division per quotient once LLVM's CSE merges the `1 / b`
    "fdiv": Rule(("fdiv",), (lambda b, x: b.fdiv(b.const(1.0), x[1]), _fdiv_denominator)),
    # frem(a, b) = a - b * trunc(a / b)
    "frem": Rule(("frem",), (_one, lambda b, x: b.fneg(b.call("trunc", b.fdiv(x[0], x[1]))))),
    "fneg": Rule(("fneg",), (lambda b, x: b.const(-1.0),)),
}


# ---------------------------------------------------------------- math functions
def _zero_at_zero(b, v, partial):
    """`partial`, or 0 where v (the result) is 0: sqrt and cbrt at their singular point."""
    return b.select(b.fcmp("oeq", v, b.const(0.0)), b.const(0.0), partial)


def _rsqrt_one_minus_sq(b, v):
    return b.fdiv(b.const(1.0), b.call("sqrt", b.fsub(b.const(1.0), b.square(v))))


def _minmax(pred_first):
    """d min(x,y): 1 to the operand that was chosen (ties go to the first)."""
    def first(b, x):
        return b.select(b.fcmp(pred_first, x[0], x[1]), b.const(1.0), b.const(0.0))

    def second(b, x):
        return b.select(b.fcmp(pred_first, x[0], x[1]), b.const(0.0), b.const(1.0))
    return first, second


_min_first, _min_second = _minmax("ole")
_max_first, _max_second = _minmax("oge")


def _chosen_terms(pred_first):
    """Forward mode's terms of min/max: the chosen operand's tangent itself, 0 for the other
    (not 1 * t and 0 * t: the operand not chosen may be -inf or NaN with a NaN tangent, as
    log(0) is under fmax(-2, log(x * x)), and 0 * NaN is NaN)."""
    def first(b, x, t):
        return b.select(b.fcmp(pred_first, x[0], x[1]), t, b.const(0.0))

    def second(b, x, t):
        return b.select(b.fcmp(pred_first, x[0], x[1]), b.const(0.0), t)
    return first, second

_LN2, _LN10 = math.log(2.0), math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)

_MATH: list[Rule] = [
    # roots and powers
    # 0.5 * (1 / sqrt(x)), equal to 0.5 / sqrt(x) bit for bit: the reciprocal is the one a
    # quotient by sqrt(x) needs as well (Rodrigues' rot / theta), so one division serves both
    # at 0, where the partial is infinite, Enzyme's convention: the partial is 0 (in every
    # mode: d sqrt(x*x) at 0 is 0, not inf * 0 = NaN; d sqrt(x) at 0 is 0, not inf). The test
    # is on the result (0 exactly when x is), so sqrt's rule still needs only the result.
    Rule(("sqrt",), (lambda b, x: _zero_at_zero(b, x.result, b.fmul(b.const(0.5), b.fdiv(b.const(1.0), x.result))),)),
    Rule(("cbrt",), (lambda b, x: _zero_at_zero(b, x.result, b.fdiv(x.result, b.fmul(b.const(3.0), x[0]))),)),
    # d/dy x^y = log(x) x^y, and 0 where x^y is 0 (x = 0: log(x) * 0 would be NaN)
    Rule(("pow",), (lambda b, x: b.fmul(x[1], b.call("pow", x[0], b.fsub(x[1], b.const(1.0)))),
                    lambda b, x: _zero_at_zero(b, x.result, b.fmul(b.call("log", x[0]), x.result)))),
    Rule(("powi",), (lambda b, x: b.fmul(b.int_to_float(x.int_operand(1), "i32"),
                                         b.call("powi", x[0], "i32 " + x.int_minus_one(1))),
                     _zero)),
    Rule(("hypot",), (lambda b, x: b.fdiv(x[0], x.result), lambda b, x: b.fdiv(x[1], x.result))),
    # exponentials and logarithms
    Rule(("exp",), (lambda b, x: x.result,)),
    Rule(("exp2",), (lambda b, x: b.fmul(x.result, b.const(_LN2)),)),
    Rule(("expm1",), (lambda b, x: b.fadd(x.result, b.const(1.0)),)),
    Rule(("log",), (lambda b, x: b.fdiv(b.const(1.0), x[0]),)),
    Rule(("log2",), (lambda b, x: b.fdiv(b.const(1.0), b.fmul(x[0], b.const(_LN2))),)),
    Rule(("log10",), (lambda b, x: b.fdiv(b.const(1.0), b.fmul(x[0], b.const(_LN10))),)),
    Rule(("log1p",), (lambda b, x: b.fdiv(b.const(1.0), b.fadd(x[0], b.const(1.0))),)),
    # trigonometry
    Rule(("sin",), (lambda b, x: b.call("cos", x[0]),)),
    Rule(("cos",), (lambda b, x: b.fneg(b.call("sin", x[0])),)),
    Rule(("tan",), (lambda b, x: b.fadd(b.const(1.0), b.square(x.result)),)),
    Rule(("asin",), (lambda b, x: _rsqrt_one_minus_sq(b, x[0]),)),
    Rule(("acos",), (lambda b, x: b.fneg(_rsqrt_one_minus_sq(b, x[0])),)),
    Rule(("atan",), (lambda b, x: b.fdiv(b.const(1.0), b.fadd(b.const(1.0), b.square(x[0]))),)),
    Rule(("atan2",), (lambda b, x: b.fdiv(x[1], b.fadd(b.square(x[0]), b.square(x[1]))),
                      lambda b, x: b.fneg(b.fdiv(x[0], b.fadd(b.square(x[0]), b.square(x[1])))))),
    # hyperbolic
    Rule(("sinh",), (lambda b, x: b.call("cosh", x[0]),)),
    Rule(("cosh",), (lambda b, x: b.call("sinh", x[0]),)),
    Rule(("tanh",), (lambda b, x: b.fsub(b.const(1.0), b.square(x.result)),)),
    Rule(("asinh",), (lambda b, x: b.fdiv(b.const(1.0), b.call("sqrt", b.fadd(b.square(x[0]), b.const(1.0)))),)),
    Rule(("acosh",), (lambda b, x: b.fdiv(b.const(1.0), b.call("sqrt", b.fsub(b.square(x[0]), b.const(1.0)))),)),
    Rule(("atanh",), (lambda b, x: b.fdiv(b.const(1.0), b.fsub(b.const(1.0), b.square(x[0]))),)),
    # special functions
    Rule(("erf",), (lambda b, x: b.fmul(b.const(_TWO_OVER_SQRT_PI), b.call("exp", b.fneg(b.square(x[0])))),)),
    Rule(("erfc",), (lambda b, x: b.fmul(b.const(-_TWO_OVER_SQRT_PI), b.call("exp", b.fneg(b.square(x[0])))),)),
    Rule(("lgamma",), (lambda b, x: b.call("digamma", x[0]),)),
    Rule(("tgamma",), (lambda b, x: b.fmul(x.result, b.call("digamma", x[0])),)),
    Rule(("exp10",), (lambda b, x: b.fmul(x.result, b.const(_LN10)),)),
    # ldexp(x, n) = x * 2^n
    Rule(("ldexp", "scalbn"), (lambda b, x: b.call("exp2", b.int_to_float(x.int_operand(1), "i32")), _zero)),
    # fused and piecewise-linear
    Rule(("fma", "fmuladd"), (lambda b, x: x[1], lambda b, x: x[0], _one)),
    Rule(("fmod",), (_one, lambda b, x: b.fneg(b.call("trunc", b.fdiv(x[0], x[1]))))),
    # remainder(x, y) = x - n y with n = x / y rounded to nearest even (rint's default mode)
    Rule(("remainder",), (_one, lambda b, x: b.fneg(b.call("rint", b.fdiv(x[0], x[1]))))),
    # Bessel functions of the first and second kind (glibc j0/j1/y0/y1)
    Rule(("j0",), (lambda b, x: b.fneg(b.call("j1", x[0])),)),
    Rule(("y0",), (lambda b, x: b.fneg(b.call("y1", x[0])),)),
    Rule(("j1",), (lambda b, x: b.fsub(b.call("j0", x[0]), b.fdiv(x.result, x[0])),)),
    Rule(("y1",), (lambda b, x: b.fsub(b.call("y0", x[0]), b.fdiv(x.result, x[0])),)),
    # logb: the binary exponent, piecewise constant
    Rule(("logb",), (_zero,)),
    # modf(x, &ip): the fractional part moves with x, the integral part (stored) is a step
    Rule(("modf",), (_one, _zero)),
    # frexp(x, &e) = x * 2^-e: the mantissa's derivative is 2^-e = m / x (exact); 1 at x = 0
    Rule(("frexp",), (lambda b, x: b.select(b.fcmp("oeq", x[0], b.const(0.0)), b.const(1.0),
                                            b.fdiv(x.result, x[0])), _zero)),
    # fdim(x, y) = x > y ? x - y : 0
    Rule(("fdim",), (lambda b, x: b.select(b.fcmp("ogt", x[0], x[1]), b.const(1.0), b.const(0.0)),
                     lambda b, x: b.select(b.fcmp("ogt", x[0], x[1]), b.const(-1.0), b.const(0.0)))),
    # the sign of x, -0.0 included (Enzyme's convention: d|x| at -0.0 is -1)
    Rule(("fabs",), (lambda b, x: b.call("copysign", b.const(1.0), x[0]),)),
    Rule(("copysign",), (lambda b, x: b.fmul(b.call("copysign", b.const(1.0), x[0]),
                                             b.call("copysign", b.const(1.0), x[1])), _zero)),
    Rule(("fmin", "minnum", "minimum", "minimumnum"), (_min_first, _min_second), terms=_chosen_terms("ole")),
    Rule(("fmax", "maxnum", "maximum", "maximumnum"), (_max_first, _max_second), terms=_chosen_terms("oge")),
    Rule(("floor", "ceil", "trunc", "round", "rint", "nearbyint", "roundeven"), (_zero,)),
]

MATH_RULES: dict[str, Rule] = {name: rule for rule in _MATH for name in rule.names}


_INTRINSIC_NAME = re.compile(r'llvm\.([a-z0-9]+)\.(f64|f32|f80)(?:\.i32)?')


@functools.lru_cache(maxsize=4096)
def math_rule(callee: str) -> tuple[Rule, str] | None:
    """(rule, float type) for a callee spelling like '@sinf' or '@llvm.pow.f64' (memoized:
    the engine asks for every call it meets)."""
    name = callee.lstrip("@").strip('"')
    m = _INTRINSIC_NAME.fullmatch(name) if name.startswith("llvm.") else None
    if m:
        rule = MATH_RULES.get(m.group(1))
        return (rule, {"f64": "double", "f32": "float", "f80": "x86_fp80"}[m.group(2)]) if rule else None
    if name in MATH_RULES and name not in INTRINSIC_ONLY:
        return MATH_RULES[name], "double"
    if name.endswith("f") and name[:-1] in MATH_RULES and name[:-1] not in INTRINSIC_ONLY:
        return MATH_RULES[name[:-1]], "float"
    if name.endswith("l") and name[:-1] in MATH_RULES and name[:-1] not in INTRINSIC_ONLY:
        return MATH_RULES[name[:-1]], "x86_fp80"
    return None



# fdiv for forward mode: the denominator's partial -q/b as -q * (1/b), sharing the
# reciprocal that the numerator's partial computes (one division per quotient, and one
# for all quotients by the same value: Rodrigues' rot / theta). The partials still depend
# on primal values only, so they are computed off the tangents' dependency chain.
# The denominator's term is -(q * t) * (1/b), not (-q / b) * t: with b = 1e-160 the partial
# -q/b overflows to -inf, and a zero tangent of b would give NaN instead of 0.
def _denominator_term(b, x, t):
    r = x.result if b.is_const(x.raw(0), 1.0) else b.fdiv(b.const(1.0), x[1])
    return b.fneg(b.fmul(b.fmul(x.result, t), r))


FDIV_SHARED_RECIPROCAL = Rule(("fdiv",), INSTRUCTION_RULES["fdiv"].partials, terms=(None, _denominator_term))
# the instruction rules forward mode uses
FORWARD_INSTRUCTION_RULES: dict[str, Rule] = {**INSTRUCTION_RULES, "fdiv": FDIV_SHARED_RECIPROCAL}


# ---------------------------------------------------------------- fused patterns
# x * sqrt(x) (x^1.5: gravity, Coulomb and Plummer kernels): d = 1.5 sqrt(x) dx. The rule of
# the product and sqrt's own rule need 0.5 / sqrt(x), a division; this one needs none.
# Operands are (x, sqrt(x)); the sqrt operand's partial is folded into x's.
X_SQRT_X = Rule(("x*sqrt(x)",), (lambda b, x: b.fmul(b.const(1.5), x[1]), lambda b, x: None))


def fused_fmul_rule(fn, inst) -> tuple[Rule, list] | None:
    """For `fmul x, sqrt(x)` (either order, sqrt as libm call or intrinsic of the same
    type): X_SQRT_X and the operands in the order it expects; else None."""
    if inst.opcode != "fmul" or len(inst.operands) != 2:
        return None
    for k in (0, 1):
        other = inst.operands[1 - k]
        d = fn.defs.get(inst.operands[k][1])
        if d is None or d.opcode != "call" or not d.callee or len(d.operands) != 1:
            continue
        found = math_rule(d.callee)
        if found and found[0] is MATH_RULES["sqrt"] and found[1] == inst.type \
                and d.operands[0][1] == other[1]:
            return X_SQRT_X, [other, inst.operands[k]]
    return None

