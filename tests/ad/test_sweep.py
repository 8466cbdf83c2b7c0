"""The call classifier both sweeps share (enzyme_build/ad/sweep.py): one order for every mode, so
a call is never one thing to reverse mode and another to forward mode."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from enzyme_build.ad.sweep import CUSTOM, DERIVED, DROP, FREE, INACTIVE, MATH, MEMORY, UNKNOWN, classify_call
from enzyme_build.custom.registry import CustomRule
from enzyme_build.ir.model import parse_instruction, parse_module

BODY = parse_module("""
define double @helper(double %x) {
entry:
  ret double %x
}
""")


def engine(custom=None, inactive=()):
    return SimpleNamespace(custom=custom or {}, inactive=set(inactive), function_like={"mysin": "sin"},
                           module=BODY, differentiable={"helper"})


def call(text: str):
    return parse_instruction(text)


ACTIVE = lambda: True      # noqa: E731
INACTIVE_CALL = lambda: False  # noqa: E731


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_a_custom_rule_wins_over_memory_handling(mode):
    """realloc with a user's rule (both halves): the rule, in both modes. Forward mode used to
    take realloc as a memory function and ignore the rule."""
    rule = CustomRule("realloc", augment="realloc_aug", gradient="realloc_grad", forward="realloc_fwd")
    inst = call("%q = call ptr @realloc(ptr %p, i64 %n)")
    assert classify_call(engine({"realloc": rule}), inst, mode=mode, active=ACTIVE) == CUSTOM
    assert classify_call(engine(), inst, mode=mode, active=ACTIVE) == MEMORY


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_every_deallocator_is_a_free(mode):
    """Over-aligned delete included (reverse mode refused it as a function without a rule)."""
    for name in ("free", "_ZdlPv", "_ZdlPvSt11align_val_t", "_ZdlPvmSt11align_val_t"):
        inst = call(f"call void @{name}(ptr %p)")
        assert classify_call(engine(), inst, mode=mode, active=ACTIVE) == FREE, name


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_classifier_order(mode):
    e = engine(inactive={"logger"})
    assert classify_call(e, call("call void @llvm.dbg.value(metadata ptr %p)"), mode=mode, active=ACTIVE) == DROP
    assert classify_call(e, call("call void @llvm.memcpy.p0.p0.i64(ptr %a, ptr %b, i64 8, i1 false)"),
                         mode=mode, active=ACTIVE) == MEMORY
    assert classify_call(e, call("call void @logger(double %x)"), mode=mode, active=ACTIVE) == INACTIVE
    assert classify_call(e, call("%y = call double @sin(double %x)"), mode=mode, active=ACTIVE) == MATH
    assert classify_call(e, call("%y = call double @mysin(double %x)"), mode=mode, active=ACTIVE) == MATH
    assert classify_call(e, call("%y = call double @sin(double %x)"), mode=mode, active=INACTIVE_CALL) == INACTIVE
    assert classify_call(e, call("%y = call double @helper(double %x)"), mode=mode, active=ACTIVE) == DERIVED
    assert classify_call(e, call("%y = call double @opaque(double %x)"), mode=mode, active=ACTIVE) == UNKNOWN
    assert classify_call(e, call("%y = call double %fp(double %x)"), mode=mode, active=ACTIVE) == UNKNOWN


def test_a_rule_of_one_mode_only():
    """A reverse-only rule does not make the call custom in forward mode."""
    rule = CustomRule("helper", augment="a", gradient="g")
    inst = call("%y = call double @helper(double %x)")
    assert classify_call(engine({"helper": rule}), inst, mode="reverse", active=ACTIVE) == CUSTOM
    assert classify_call(engine({"helper": rule}), inst, mode="forward", active=ACTIVE) == DERIVED
