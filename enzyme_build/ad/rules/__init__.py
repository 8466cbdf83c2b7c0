"""Derivative rules as tables, shared by reverse and forward mode.

Usage (either engine):

    from enzyme_build.ad.rules import Builder, math_rule, INSTRUCTION_RULES
    found = math_rule("@llvm.sin.f64")          # -> (Rule, "double") or None
    b = Builder("double", fresh=my_fresh_name)  # instructions made into b.made (ir/builder.py)
    partial = rule.partials[i](b, operands)     # value name, or None when zero

`operands` is any object with `x[i]` (the i-th operand's name as usable at the point of
emission) and `x.result` (the primal result's name); for powi also
`x.int_operand(i)` / `x.int_minus_one(i)`. `b.declarations` lists the declarations the
emitted code needs and `b.helpers` the engine helpers (e.g. digamma) to define.
"""
from .builder import Builder, float_constant, math_callee  # noqa: F401
from .table import (FORWARD_INSTRUCTION_RULES, INSTRUCTION_RULES, MATH_RULES, Rule, fused_fmul_rule,  # noqa: F401
                    math_rule)
