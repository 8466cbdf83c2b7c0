"""The derivative rules table on its own (enzyme_build/ad/rules): every spelling resolves, every
partial emits IR LLVM's verifier accepts (double and float), and every partial, compiled and
called, matches central finite differences of the libm function it differentiates."""
from __future__ import annotations

import ctypes
import math
import re
import subprocess

import pytest

from enzyme_build import llvm
from enzyme_build.ad.rules import (FORWARD_INSTRUCTION_RULES, INSTRUCTION_RULES, MATH_RULES, Builder,
                                   float_constant, fused_fmul_rule, math_callee, math_rule)
from enzyme_build.ad.rules.table import X_SQRT_X
from enzyme_build.ad.tape import support_closure
from enzyme_build.ir.model import parse_module

from ad_helpers import CLANG

# names that exist only as LLVM intrinsics, and rules whose second operand is an integer
# or an out-parameter (not differentiated)
INTRINSIC_ONLY = {"fmuladd", "minnum", "maxnum", "minimum", "maximum", "minimumnum", "maximumnum", "powi"}
INT_SECOND = {"powi", "ldexp", "scalbn"}
OUT_SECOND = {"modf", "frexp"}
FLOAT_TYPES = ("double", "float")


# ---------------------------------------------------------------- spellings

@pytest.mark.parametrize("name", sorted(MATH_RULES))
def test_every_spelling_resolves(name):
    rule = MATH_RULES[name]
    assert name in rule.names
    assert math_rule(f"@llvm.{name}.f64") == (rule, "double")
    assert math_rule(f"@llvm.{name}.f32") == (rule, "float")
    if name in INTRINSIC_ONLY:   # no libm function of that spelling
        assert math_rule(name) is None and math_rule(name + "f") is None
    else:
        assert math_rule(f"@{name}") == (rule, "double")
        assert math_rule(f"@{name}f") == (rule, "float")
        assert math_rule(f'@"{name}l"') == (rule, "x86_fp80")


def test_unknown_functions_have_no_rule():
    for name in ("@printf", "@sinus", "@llvm.memcpy.p0.p0.i64", "@llvm.sin.v2f64", "@cosx"):
        assert math_rule(name) is None, name
    assert math_rule("@llvm.powi.f64.i32") == (MATH_RULES["powi"], "double")


TWO_OPERANDS = {"pow", "hypot", "atan2", "fmod", "remainder", "fdim", "copysign", "fmin", "fmax", "minnum",
                "maxnum", "minimum", "maximum", "minimumnum", "maximumnum"} | INT_SECOND | OUT_SECOND
THREE_OPERANDS = {"fma", "fmuladd"}


@pytest.mark.parametrize("name", sorted(MATH_RULES))
def test_partials_match_the_arity(name):
    """One partial per operand of the function (C99 / LLVM LangRef arity)."""
    arity = 3 if name in THREE_OPERANDS else 2 if name in TWO_OPERANDS else 1
    assert len(MATH_RULES[name].partials) == arity, name


def test_one_rule_covers_a_family():
    for family in (("fmin", "minnum", "minimum", "minimumnum"), ("fma", "fmuladd"), ("ldexp", "scalbn"),
                   ("floor", "ceil", "trunc", "round", "rint", "nearbyint", "roundeven")):
        assert len({id(MATH_RULES[n]) for n in family}) == 1, family


# ---------------------------------------------------------------- emitting partials

class Operands:
    """What a rule reads: operands and result as parameters of the function being emitted."""

    def __init__(self, b: Builder):
        self.b = b

    def __getitem__(self, i):
        return f"%x{i}"

    def raw(self, i):
        return f"%x{i}"

    @property
    def result(self):
        return "%r"

    def int_operand(self, i):
        return "%n"

    def int_minus_one(self, i):
        return self.b.ir.binop("sub", "i32", "%n", "1", hint="n")

    def result_at_hand(self):
        return True

    def costless(self, i):
        return True


class ResultNotAtHand(Operands):
    """The reverse sweep's view inside a loop: the result would have to be divided again or
    kept, the operands are re-read for free."""

    def result_at_hand(self):
        return False

    @property
    def result(self):
        raise AssertionError("the result read")


def _fresh():
    counter = [0]

    def fresh(hint: str) -> str:
        counter[0] += 1
        return f"%{hint}{counter[0]}"
    return fresh


def partial_function(label: str, rule, k: int, fty: str, operands=Operands) -> tuple[str, dict[str, str], set[str]]:
    """`define fty @label(fty %x0, fty %x1, fty %x2, i32 %n, fty %r)` returning partial k."""
    b = Builder(fty, _fresh(), text=True)
    value = rule.partials[k](b, operands(b))
    value = float_constant(0.0, fty) if value is None else value
    text = "\n".join([f"define {fty} @{label}({fty} %x0, {fty} %x1, {fty} %x2, i32 %n, {fty} %r) {{", "entry:"]
                     + b.made + [f"  ret {fty} {value}", "}"])
    return text, b.declarations, b.helpers


def rules_module(fty: str, rules: dict) -> tuple[str, list[tuple[str, str, int]]]:
    """A module with one function per (rule, operand) partial; returns it and (label, name, k)."""
    bodies, decls, helpers, labels = [], {}, set(), []
    for name in sorted(rules):
        for k in range(len(rules[name].partials)):
            label = f"d_{name}_{k}_{fty}"
            text, d, h = partial_function(label, rules[name], k, fty)
            bodies.append(text)
            decls.update(d)
            helpers |= h
            labels.append((label, name, k))
    texts, support_decls = support_closure({f"__enzyme_build_{h}" for h in helpers})
    for callee in support_decls:
        decls.setdefault(callee, math_callee(callee[len("@llvm."):].split(".")[0], "double")[1])
    return "\n".join(bodies + texts + sorted(decls.values())) + "\n", labels


@pytest.mark.parametrize("fty", FLOAT_TYPES)
def test_math_partials_verify(fty):
    text, labels = rules_module(fty, MATH_RULES)
    llvm.verify(llvm.parse_assembly(text, f"rules-{fty}"), generated=True)
    assert len(labels) == sum(len(r.partials) for r in MATH_RULES.values())


@pytest.mark.parametrize("fty", FLOAT_TYPES)
def test_instruction_partials_verify(fty):
    for rules in (INSTRUCTION_RULES, FORWARD_INSTRUCTION_RULES):
        text, _ = rules_module(fty, rules)
        llvm.verify(llvm.parse_assembly(text, f"instruction-rules-{fty}"), generated=True)


def test_rules_read_operands_lazily():
    """A rule that needs only the result does not read the operands (the reverse sweep then
    keeps nothing of them): exp, tan, tanh, sqrt."""
    class Counting(Operands):
        def __getitem__(self, i):
            raise AssertionError(f"operand {i} read")
    for name in ("exp", "tan", "tanh", "sqrt"):
        b = Builder("double", _fresh(), text=True)
        assert MATH_RULES[name].partials[0](b, Counting(b)) is not None


@pytest.mark.parametrize("one", ["1.000000e+00", "0x3FF0000000000000", "1.0"])
@pytest.mark.parametrize("rules", [INSTRUCTION_RULES, FORWARD_INSTRUCTION_RULES], ids=["reverse", "forward"])
def test_reciprocal_denominator_partial_is_minus_q_squared(rules, one):
    """d(1/b)/db = -q*q: no division, and the denominator itself is not read (the reverse
    sweep keeps only q). Any other numerator gives -q * (1/b) in both modes: the reciprocal the
    numerator's partial computes too (one division per quotient after CSE)."""
    class Reciprocal(Operands):
        def __getitem__(self, i):
            raise AssertionError(f"operand {i} read")

        def raw(self, i):
            return one if i == 0 else "%x1"
    b = Builder("double", _fresh(), text=True)
    partial = rules["fdiv"].partials[1](b, Reciprocal(b))
    assert not any("fdiv" in line for line in b.made), b.made
    assert any(re.search(r"fmul double %r, %r$", line) for line in b.made), b.made
    b = Builder("double", _fresh(), text=True)
    rules["fdiv"].partials[1](b, Operands(b))
    assert any("fdiv" in line for line in b.made), b.made
    assert partial is not None


def test_quotient_denominator_partial_without_the_result(tmp_path):
    """Where the quotient is not at hand but its numerator is, d(a/b)/db = -(a * (1/b)) * (1/b):
    the result is not read and the only division is the reciprocal the numerator's partial
    shares; its values match -a/b^2."""
    b = Builder("double", _fresh(), text=True)
    INSTRUCTION_RULES["fdiv"].partials[1](b, ResultNotAtHand(b))
    divisions = {line.split(" = ", 1)[1] for line in b.made if " fdiv " in line}
    assert divisions == {"fdiv double 0x3FF0000000000000, %x1"} or \
        divisions == {"fdiv double 1.000000e+00, %x1"}, b.made
    text, decls, _ = partial_function("d_fdiv_b", INSTRUCTION_RULES["fdiv"], 1, "double", ResultNotAtHand)
    module = llvm.parse_assembly(text + "\n".join(decls.values()) + "\n", "fdiv-partial")
    llvm.verify(module, generated=True)
    obj, lib = tmp_path / "p.o", tmp_path / "libp.so"
    obj.write_bytes(llvm.emit_object(module, opt=0))
    subprocess.run([CLANG, "-shared", str(obj), "-o", str(lib)], check=True, capture_output=True)
    f = ctypes.CDLL(str(lib)).d_fdiv_b
    f.restype, f.argtypes = ctypes.c_double, [ctypes.c_double] * 3 + [ctypes.c_int, ctypes.c_double]
    for a, d in ((0.7, 1.3), (-2.5, 0.25), (3.0, -1.5e-3), (0.0, 4.0)):
        assert math.isclose(f(a, d, 0.0, 0, float("nan")), -a / (d * d), rel_tol=1e-14, abs_tol=0.0), (a, d)


def test_literal_values():
    from enzyme_build.ad.rules.builder import literal_value
    assert literal_value("1.000000e+00") == 1.0 and literal_value("-2.5") == -2.5
    assert literal_value("0x3FF0000000000000") == 1.0 and literal_value("0xBFF0000000000000") == -1.0
    for text in ("%x", "undef", "splat (double 1.0)", "0xK3FFF8000000000000000", "zeroinitializer", "@g"):
        assert literal_value(text) is None, text


def test_zero_partials_emit_nothing():
    for name in ("floor", "logb", "round"):
        b = Builder("double", _fresh(), text=True)
        assert MATH_RULES[name].partials[0](b, Operands(b)) is None and not b.made
    b = Builder("double", _fresh(), text=True)
    assert MATH_RULES["ldexp"].partials[1](b, Operands(b)) is None


# ---------------------------------------------------------------- values against finite differences

LIBM_NAME = {"fmuladd": "fma", "minnum": "fmin", "maxnum": "fmax", "minimum": "fmin", "maximum": "fmax",
             "minimumnum": "fmin", "maximumnum": "fmax"}
POSITIVE = {"log", "log2", "log10", "sqrt", "pow", "lgamma", "tgamma", "y0", "y1", "j1", "cbrt"}
POINTS = {"acosh": [(1.7, 0.0, 0.0), (2.5, 0.0, 0.0)]}
DEFAULT_POINTS = [(0.7, 1.3, 0.4), (-0.35, 0.9, 1.1)]
POSITIVE_POINTS = [(0.7, 1.3, 0.4), (2.2, 0.6, 1.1)]
N_INT = 3


@pytest.fixture(scope="module")
def compiled_rules(tmp_path_factory):
    """The double partials compiled into a shared library, loaded with ctypes."""
    work = tmp_path_factory.mktemp("rules")
    rules = {**MATH_RULES, **{f"insn_{k}": r for k, r in INSTRUCTION_RULES.items()},
             **{f"fwdinsn_{k}": r for k, r in FORWARD_INSTRUCTION_RULES.items()}}
    text, labels = rules_module("double", rules)
    module = llvm.parse_assembly(text, "rules")
    llvm.verify(module, generated=True)
    obj, lib = work / "rules.o", work / "librules.so"
    obj.write_bytes(llvm.emit_object(module, opt=0))
    subprocess.run([CLANG, "-shared", str(obj), "-o", str(lib), "-lm"], check=True, capture_output=True)
    dll = ctypes.CDLL(str(lib))
    functions = {}
    for label, name, k in labels:
        f = getattr(dll, label)
        f.restype = ctypes.c_double
        f.argtypes = [ctypes.c_double] * 3 + [ctypes.c_int, ctypes.c_double]
        functions[(name, k)] = f
    return functions


LIBM = ctypes.CDLL("libm.so.6")


def primal(name: str):
    """f(x0, x1, x2) for the rule's base name, through libm itself (Python for instructions)."""
    if name.startswith(("insn_", "fwdinsn_")):
        op = name.split("_", 1)[1]
        return {"fadd": lambda a, b, c: a + b, "fsub": lambda a, b, c: a - b, "fmul": lambda a, b, c: a * b,
                "fdiv": lambda a, b, c: a / b, "frem": lambda a, b, c: math.fmod(a, b),
                "fneg": lambda a, b, c: -a}[op]
    if name == "powi":
        return lambda a, b, c: a ** N_INT
    if name in ("ldexp", "scalbn"):
        return lambda a, b, c: math.ldexp(a, N_INT)
    if name == "modf":
        return lambda a, b, c: math.modf(a)[0]
    if name == "frexp":
        return lambda a, b, c: math.frexp(a)[0]
    f = getattr(LIBM, LIBM_NAME.get(name, name))
    arity = len(MATH_RULES[name].partials)
    f.restype = ctypes.c_double
    f.argtypes = [ctypes.c_double] * arity
    return lambda a, b, c: f(*(a, b, c)[:arity])


def _checked(name: str) -> list[tuple[str, int]]:
    rule = MATH_RULES.get(name) or INSTRUCTION_RULES.get(name.split("_", 1)[-1])
    count = len((FORWARD_INSTRUCTION_RULES if name.startswith("fwdinsn_") else
                 INSTRUCTION_RULES if name.startswith("insn_") else MATH_RULES)[name.split("_", 1)[-1]
                if name.startswith(("insn_", "fwdinsn_")) else name].partials) if rule else 0
    return [(name, k) for k in range(count) if not (k == 1 and name in INT_SECOND | OUT_SECOND)]


CHECKED = [c for n in sorted(MATH_RULES) for c in _checked(n)] + \
          [c for n in sorted(INSTRUCTION_RULES) for c in _checked(f"insn_{n}")] + \
          [c for n in sorted(FORWARD_INSTRUCTION_RULES) for c in _checked(f"fwdinsn_{n}")]


@pytest.mark.parametrize("name,k", CHECKED, ids=[f"{n}-{k}" for n, k in CHECKED])
def test_partial_matches_finite_differences(compiled_rules, name, k):
    f = primal(name)
    base = name.split("_", 1)[-1] if name.startswith(("insn_", "fwdinsn_")) else name
    points = POINTS.get(base, POSITIVE_POINTS if base in POSITIVE else DEFAULT_POINTS)
    for point in points:
        h = 1e-6 * max(1.0, abs(point[k]))
        up, down = list(point), list(point)
        up[k] += h
        down[k] -= h
        expected = (f(*up) - f(*down)) / (2 * h)
        got = compiled_rules[(name, k)](*point, N_INT, f(*point))
        assert math.isclose(got, expected, rel_tol=1e-5, abs_tol=1e-6), (name, k, point, got, expected)


# ---------------------------------------------------------------- fused patterns

FUSED = """
define double @f(double %x, double %y) {
entry:
  %s = call double @llvm.sqrt.f64(double %x)
  %a = fmul double %x, %s
  %b = fmul double %s, %x
  %c = fmul double %y, %s
  %t = call float @llvm.sqrt.f32(float 1.0)
  ret double %a
}
declare double @llvm.sqrt.f64(double)
declare float @llvm.sqrt.f32(float)
"""


def test_fused_x_times_sqrt_x_in_either_order():
    fn = parse_module(FUSED).functions["f"]
    by_name = {i.result: i for i in fn.instructions() if i.result}
    for product in ("%a", "%b"):
        rule, operands = fused_fmul_rule(fn, by_name[product])
        assert rule is X_SQRT_X
        assert [v for _, v in operands] == ["%x", "%s"]
    assert fused_fmul_rule(fn, by_name["%c"]) is None      # y * sqrt(x): the product rule
    assert fused_fmul_rule(fn, by_name["%s"]) is None      # not an fmul
