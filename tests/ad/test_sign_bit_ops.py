"""Sign-bit arithmetic on a float's bits (`sign_bit_ops`): `x ^ SIGN`, `x & ~SIGN`,
`x | SIGN` and `(a & ~SIGN) | (b & SIGN)` on integers read as floats become fneg, fabs,
-fabs and copysign between bitcasts (the same bits), so the engine differentiates them;
integer code that never meets a float is left as it was. The derivatives of programs of
the class are checked in tests/ad/test_integer_moves.py."""
from __future__ import annotations

import pytest

from enzyme_build.ad.stage import sign_bit_ops

from ad_helpers import ir_module, verified

SIGN64, REST64 = "-9223372036854775808", "9223372036854775807"


def module(*body: str, ret: str = "double") -> str:
    return ir_module(*body, ret=ret, params="ptr %p, ptr %q")


def body_of(text: str) -> list[str]:
    lines = text.split("\n")
    return lines[lines.index("bb:") + 1:lines.index("}")]


def test_xor_read_as_double_is_fneg():
    out = verified(sign_bit_ops(verified(module(
        "  %w = load i64, ptr %p, align 8",
        f"  %n = xor i64 %w, {SIGN64}",
        "  %d = bitcast i64 %n to double",
        "  ret double %d"))))
    assert body_of(out) == [
        "  %w = load i64, ptr %p, align 8",
        "  %n.x = bitcast i64 %w to double",
        "  %n.f = fneg double %n.x",
        "  %n = bitcast double %n.f to i64",
        "  %d = bitcast i64 %n to double",
        "  ret double %d"]


@pytest.mark.parametrize("op, mask, ops", [
    ("and", REST64, ["call double @llvm.fabs.f64(double %n.x)"]),
    ("or", SIGN64, ["call double @llvm.fabs.f64(double %n.x)", "fneg double %n.abs"]),
])
def test_masks_are_fabs_and_negative_fabs(op, mask, ops):
    out = verified(sign_bit_ops(verified(module(
        "  %w = load i64, ptr %p, align 8",
        f"  %n = {op} i64 %w, {mask}",
        "  %d = bitcast i64 %n to double",
        "  ret double %d"))))
    for o in ops:
        assert any(line.endswith(o) for line in body_of(out)), out
    assert f" = {op} i64" not in out and "declare double @llvm.fabs.f64(double)" in out


def test_copysign_from_two_words_either_order():
    for first, second in (("%m", "%s"), ("%s", "%m")):
        out = verified(sign_bit_ops(verified(module(
            "  %a = load i64, ptr %p, align 8",
            "  %b = load i64, ptr %q, align 8",
            f"  %m = and i64 %a, {REST64}",
            f"  %s = and i64 %b, {SIGN64}",
            f"  %r = or disjoint i64 {first}, {second}",
            "  %d = bitcast i64 %r to double",
            "  ret double %d"))))
        body = body_of(out)
        assert "  %r.f = call double @llvm.copysign.f64(double %r.mag, double %r.sgn)" in body
        assert "  %r.mag = bitcast i64 %a to double" in body and "  %r.sgn = bitcast i64 %b to double" in body
        assert not any(" = and " in line for line in body)


def test_copysign_onto_a_magnitude_from_fabs():
    # what instcombine leaves when the magnitude's double is known: bitcast (fabs d)
    out = verified(sign_bit_ops(verified(module(
        "  %d = load double, ptr %p, align 8",
        "  %b = load i64, ptr %q, align 8",
        "  %f = tail call double @llvm.fabs.f64(double %d)",
        "  %m = bitcast double %f to i64",
        f"  %s = and i64 %b, {SIGN64}",
        "  %r = or disjoint i64 %s, %m",
        "  %x = bitcast i64 %r to double",
        "  ret double %x"))))
    body = body_of(out)
    assert "  %r.f = call double @llvm.copysign.f64(double %f, double %r.sgn)" in body
    assert "  %r.sgn = bitcast i64 %b to double" in body
    assert not any(" = and " in line or " = or " in line for line in body)


def sign_or_constant(ity: str, fty: str, or_line: str) -> list[str]:
    """The body of a function taking a word's sign (`%s = %b & SIGN`), or-ing it as `or_line`
    says into `%r`, and returning `%r` read as a float (sign_bit_ops applied, verified)."""
    sign = SIGN64 if ity == "i64" else "-2147483648"
    return body_of(verified(sign_bit_ops(verified(module(
        f"  %b = load {ity}, ptr %q, align 8",
        f"  %s = and {ity} %b, {sign}",
        or_line,
        f"  %x = bitcast {ity} %r to {fty}",
        f"  ret {fty} %x", ret=fty)))))


@pytest.mark.parametrize("ity, fty, constant, spelled", [
    ("i64", "double", "4604930618986332160", "0x3FE8000000000000"),   # 0.75
    ("i32", "float", "1069547520", "0x3FF8000000000000"),            # 1.5f, spelled as a double
])
@pytest.mark.parametrize("constant_first", [False, True])
def test_copysign_onto_a_constant_magnitude(ity, fty, constant, spelled, constant_first):
    # `(b & SIGN) | C`: the magnitude's `and` folded into a constant with its sign bit clear
    # (instcombine puts the constant second; SCCP alone, before AD-before-opt, leaves it first)
    operands = f"{constant}, %s" if constant_first else f"%s, {constant}"
    body = sign_or_constant(ity, fty, f"  %r = or disjoint {ity} {operands}")
    suffix = "f64" if fty == "double" else "f32"
    assert f"  %r.f = call {fty} @llvm.copysign.{suffix}({fty} {spelled}, {fty} %r.sgn)" in body, body
    assert f"  %r.sgn = bitcast {ity} %b to {fty}" in body   # the word itself: its `and` is gone
    assert not any(" = or " in line for line in body)


@pytest.mark.parametrize("constant", [
    "-4618441417868443648",   # -0.75: the sign bit set, not a magnitude
    "2143289345",             # a float NaN with a payload: kept as bits
])
def test_or_with_other_constants_is_left_alone(constant):
    ity, fty = ("i32", "float") if constant == "2143289345" else ("i64", "double")
    assert f"  %r = or {ity} %s, {constant}" in sign_or_constant(ity, fty, f"  %r = or {ity} %s, {constant}")


def test_sign_picked_on_a_branch():
    # the sign of a double, isolated (copysign(0.0, d)), or a constant, merged by a phi
    out = verified(sign_bit_ops(verified(module(
        "  %d = load double, ptr %p, align 8",
        "  %c = fcmp ogt double %d, 1.0",
        "  br i1 %c, label %one, label %two",
        "one:",
        "  %w = bitcast double %d to i64",
        f"  %s = and i64 %w, {SIGN64}",
        "  br label %two",
        "two:",
        "  %sg = phi i64 [ %s, %one ], [ 0, %bb ]",
        "  %e = load double, ptr %q, align 8",
        "  %f = tail call double @llvm.fabs.f64(double %e)",
        "  %m = bitcast double %f to i64",
        "  %r = or disjoint i64 %sg, %m",
        "  %x = bitcast i64 %r to double",
        "  ret double %x"))))
    assert "  %s.f = call double @llvm.copysign.f64(double 0.0, double %s.x)" in out
    assert "  %r.f = call double @llvm.copysign.f64(double %f, double %r.sgn)" in out
    assert "  %r.sgn = bitcast i64 %sg to double" in out


def test_fabs_of_a_word_merged_from_a_float_and_a_load():
    # fuzz-15: the word is a double stored on one path, the old bytes on the other
    out = verified(sign_bit_ops(verified(module(
        "  %old = load i64, ptr %p, align 8",
        "  %c = load i64, ptr %q, align 8",
        "  %t = icmp sgt i64 %c, 0",
        "  br i1 %t, label %one, label %two",
        "one:",
        "  %d = load double, ptr %q, align 8",
        "  %n = fneg double %d",
        "  store double %n, ptr %p, align 8",
        "  %nb = bitcast double %n to i64",
        "  br label %two",
        "two:",
        "  %w = phi i64 [ %nb, %one ], [ %old, %bb ]",
        f"  %m = and i64 %w, {REST64}",
        "  store i64 %m, ptr %q, align 8",
        "  ret double 0.0"))))
    assert "  %m.f = call double @llvm.fabs.f64(double %m.x)" in out
    assert "  %m.x = bitcast i64 %w to double" in out


def test_float_bits_through_i32_and_stored_in_place():
    out = verified(sign_bit_ops(verified(module(
        "  %w = load i32, ptr %p, align 4",
        "  %n = xor i32 %w, -2147483648",
        "  store i32 %n, ptr %q, align 4",
        "  ret float 0.0", ret="float"))))
    assert "  %n.f = fneg float %n.x" in body_of(out)


@pytest.mark.parametrize("lines", [
    # integer code: the flipped word is hashed, never read as a float
    ["  %w = load i64, ptr %p, align 8", f"  %n = xor i64 %w, {SIGN64}", "  %h = mul i64 %n, 31",
     "  %d = uitofp i64 %h to double", "  ret double %d"],
    # another mask: exponent bits are not a sign operation
    ["  %w = load i64, ptr %p, align 8", "  %n = and i64 %w, 9218868437227405312",
     "  %d = bitcast i64 %n to double", "  ret double %d"],
    # a computed word stored: no load on the other side
    ["  %w = load i64, ptr %p, align 8", "  %k = add i64 %w, 1", f"  %n = xor i64 %k, {SIGN64}",
     "  store i64 %n, ptr %q, align 8", "  ret double 0.0"],
])
def test_integer_code_left_alone(lines):
    text = verified(module(*lines))
    assert sign_bit_ops(text) == text


@pytest.mark.parametrize("merge", ["phi", "select"])
def test_copysign_onto_a_magnitude_picked_on_a_branch(merge):
    # fuzz-19: the magnitude's bits are `fabs(d)`'s on one path and a constant magnitude on
    # the other (GVN merged the two words); the sign comes from another double's word
    pick = ("  %m = phi i64 [ %fb, %one ], [ 4604930618986332160, %bb ]" if merge == "phi" else
            "  %m = select i1 %c, i64 %fb, i64 4604930618986332160")
    lines = [
        "  %d = load double, ptr %p, align 8",
        "  %b = load i64, ptr %q, align 8",
        "  %c = fcmp ogt double %d, 1.0",
        "  br i1 %c, label %one, label %two",
        "one:",
        "  %f = tail call double @llvm.fabs.f64(double %d)",
        "  %fb = bitcast double %f to i64",
        "  br label %two",
        "two:",
    ]
    if merge == "select":
        lines = [lines[0], lines[1], lines[2], lines[5], lines[6], pick]
    else:
        lines = lines + [pick]
    lines += [f"  %s = and i64 %b, {SIGN64}",
              "  %r = or disjoint i64 %s, %m",
              "  %x = bitcast i64 %r to double",
              "  ret double %x"]
    out = verified(sign_bit_ops(verified(module(*lines))))
    # the same merge of the floats, next to the integer one, is copysign's magnitude
    if merge == "phi":
        assert "  %m.magf = phi double [ %f, %one ], [ 0x3FE8000000000000, %bb ]" in out, out
    else:
        assert "  %m.magf = select i1 %c, double %f, double 0x3FE8000000000000" in out, out
    assert "  %r.f = call double @llvm.copysign.f64(double %m.magf, double %r.sgn)" in out, out
    assert "  %r.sgn = bitcast i64 %b to double" in out


def test_a_merge_with_a_signed_constant_is_not_a_magnitude():
    out = verified(sign_bit_ops(verified(module(
        "  %d = load double, ptr %p, align 8",
        "  %b = load i64, ptr %q, align 8",
        "  %c = fcmp ogt double %d, 1.0",
        "  %f = tail call double @llvm.fabs.f64(double %d)",
        "  %fb = bitcast double %f to i64",
        "  %m = select i1 %c, i64 %fb, i64 -4618441417868443648",   # -0.75: its sign bit is set
        f"  %s = and i64 %b, {SIGN64}",
        "  %r = or disjoint i64 %s, %m",
        "  %x = bitcast i64 %r to double",
        "  ret double %x"))))
    assert "  %r = or disjoint i64 %s, %m" in out and "magf" not in out, out
