"""The IR builder (ir/builder.py): instructions made as model objects, printed by one printer,
accepted by LLVM's verifier, read back by the one parser with the same fields."""
from __future__ import annotations

import pytest

from enzyme_build import llvm
from enzyme_build.errors import InternalError
from enzyme_build.ir.builder import (FreshNames, InsertPoint, IRBuilder, Value, fill_at, print_block,
                                     print_instruction, value)
from enzyme_build.ir.model import Block, Function, parse_instruction, parse_module


def _every_kind(ir: IRBuilder) -> None:
    """One function's worth of every instruction the builder makes (entry block)."""
    s = ir.binop("fmul", "double", "%x", "%y", flags="fast")
    n = ir.fneg("double", s)
    c = ir.cmp("fcmp", "olt", "double", n, "%x")
    sel = ir.select(c, "double", n, "0.000000e+00")
    w = ir.cast("fpext", "float", "%f", "double")
    a = ir.alloca("[4 x double]", align=16)
    p = ir.gep("[4 x double]", a, [("i64", "0"), ("i64", "2")])
    ir.store("double", sel, p, align=8)
    v = ir.load("double", p, align=8)
    ir.atomicrmw("fadd", p, "double", w, "monotonic", align=8)
    agg = ir.insertvalue("{ double, double }", "poison", "double", v, [0])
    agg = ir.insertvalue("{ double, double }", agg, "double", w, [1])
    e = ir.extractvalue("{ double, double }", agg, [1], "double")
    vec = ir.insertelement("<2 x double>", "poison", "double", e, "i32", "0")
    e2 = ir.extractelement("<2 x double>", vec, "i32", "0", "double")
    r = ir.call("double", "@llvm.sqrt.f64", [("double", e2)])
    ir.call("void", "@llvm.memset.p0.i64", [("ptr", a), ("i8", "0"), ("i64", "32"), ("i1", "false")])
    k = ir.binop("add", "i64", "%n", "1", hint="n")
    done = ir.cmp("icmp", "eq", "i64", k, "4")
    ir.store("double", r, "%out")
    ir.cond_br(done, "exit", "loop")


MODULE_HEAD = """declare double @llvm.sqrt.f64(double)
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1 immarg)
"""


def _function(text_mode: bool) -> str:
    entry: list = []
    ir = IRBuilder(FreshNames(), entry, text=text_mode)
    _every_kind(ir)
    loop: list = []
    ir.into = loop
    i = ir.phi("i64", [("0", "entry"), ("%i.next", "loop"), ("%i.next", "loop")], name="%i")
    nxt = ir.binop("add", "i64", i, "1", name="%i.next")
    ir.switch("i64", nxt, "tail", [("1", "loop"), ("2", "loop"), ("7", "exit")])
    tail: list = []
    ir.into = tail
    ir.br("exit")
    exit_: list = []
    ir.into = exit_
    ir.ret("double", "%x")
    blocks = [("entry", entry), ("loop", loop), ("tail", tail), ("exit", exit_)]
    lines = ["define double @f(double %x, double %y, float %f, i64 %n, ptr %out) {"]
    for label, body in blocks:
        lines += [f"{label}:"] + body if text_mode else print_block(label, body)
    return "\n".join(lines + ["}"])


def test_made_instructions_print_to_valid_ir():
    text = MODULE_HEAD + _function(text_mode=False)
    llvm.verify(llvm.parse_assembly(text, "builder"), generated=True)


def test_text_mode_prints_the_same_lines():
    assert _function(text_mode=True) == _function(text_mode=False)


def test_values_carry_their_types():
    ir = IRBuilder(FreshNames())
    s = ir.binop("fadd", "float", "%a", "%b")
    c = ir.cmp("fcmp", "oeq", "float", s, "0.0")
    e = ir.extractvalue("{ double, ptr }", "%agg", [1], "ptr")
    assert isinstance(s, Value) and s == "%t$1" and s.type == "float" and s.typed() == "float %t$1"
    assert c.type == "i1" and e.type == "ptr"
    assert value("%y", "i64").typed() == "i64 %y"
    assert ir.call("void", "@g", []) is None


def test_the_parser_reads_back_the_fields_made():
    """Printing then parsing gives the fields the builder set: the printer is the parser's inverse."""
    body: list = []
    ir = IRBuilder(FreshNames(), body)
    _every_kind(ir)
    for made in body:
        again = parse_instruction(print_instruction(made))
        assert (again.opcode, again.result) == (made.opcode, made.result), print_instruction(made)
        if made.opcode in ("fadd", "fmul", "fneg", "select", "store", "call", "fcmp", "icmp", "add"):
            assert again.operands == made.operands, print_instruction(made)
        if made.opcode in ("fcmp", "icmp"):
            assert again.predicate == made.predicate
        if made.opcode == "call":
            assert again.callee == made.callee
        assert again.flags.split() == made.flags.split() or made.opcode == "getelementptr"


def test_uses_from_the_users_index():
    """Made instructions in a model Function: defs and users as for parsed IR."""
    body: list = []
    ir = IRBuilder(FreshNames(), body)
    s = ir.binop("fmul", "double", "%x", "%x")
    t = ir.binop("fadd", "double", s, "%x")
    ir.ret("double", t)
    fn = Function(name="f", return_type="double", params=[], header="", blocks=[Block("entry", body)])
    fn.index()
    assert fn.defs[s].opcode == "fmul"
    assert [u.result for u in fn.users()[s]] == [t]
    assert len(fn.users()["%x"]) == 2


def test_rename_last_names_the_value_just_made():
    body: list = []
    ir = IRBuilder(FreshNames(), body)
    start = len(body)
    v = ir.binop("fmul", "double", "%a", "%b")
    assert ir.rename_last(start, v, "%a$t")
    assert print_instruction(body[-1]) == "  %a$t = fmul double %a, %b"
    assert not ir.rename_last(len(body), "%a$t", "%z")     # nothing made since
    assert not ir.rename_last(start, "%other", "%z")       # the last one defines another value
    lines: list = []
    text = IRBuilder(FreshNames(), lines, text=True)
    w = text.binop("fsub", "double", "%a", "%b")
    assert text.rename_last(0, w, "%b$t") and lines == ["  %b$t = fsub double %a, %b"]


def test_clone_remaps_operands_and_drops_debug_locations():
    fn = parse_module("define void @f(ptr %p) {\nentry:\n"
                      "  %q = getelementptr inbounds double, ptr %p, i64 3, !dbg !7\n  ret void\n}\n"
                      "!7 = !{}\n").functions["f"]
    gep = fn.blocks[0].instructions[0]
    body: list = []
    copy = IRBuilder(FreshNames(), body).clone(gep, result="%q$sh", mapping={"%p": "%p$sh"})
    assert print_instruction(copy) == "  %q$sh = getelementptr inbounds double, ptr %p$sh, i64 3"
    assert copy.operands[0] == ("ptr", "%p$sh") and copy.values() == ("%p$sh",)
    assert gep.result == "%q" and "%p$sh" not in gep.text        # the original is untouched


def test_unknown_opcodes_are_refused_by_the_printer():
    from enzyme_build.ir.model import Instruction
    with pytest.raises(ValueError, match="does not make 'landingpad'"):
        print_instruction(Instruction(text="", opcode="landingpad"))


def test_clone_retargets_a_call():
    fn = parse_module("declare void @f(ptr)\ndeclare void @g(ptr)\ndefine void @h(ptr %p) {\nentry:\n"
                      "  call void @f(ptr %p), !dbg !7\n  ret void\n}\n!7 = !{}\n").functions["h"]
    call = fn.blocks[0].instructions[0]
    copy = IRBuilder(FreshNames(), []).clone(call, mapping={"@f": "@g"})
    assert print_instruction(copy) == "  call void @g(ptr %p)"
    assert copy.callee == "@g" and call.callee == "@f"
    from enzyme_build.analysis.activity import callee_name
    assert callee_name(copy) == "g"


def test_insertion_points_are_filled_by_identity():
    """A place filled later (an exit edge's slot stores, a split piece's frame push) is an
    InsertPoint in the list: fills go before it, in order, and it is removed by identity; a
    list still holding one is not printable."""
    lines: list = []
    ir = IRBuilder(FreshNames(), lines, text=True)
    first = ir.binop("fadd", "double", "%x", "%y")
    point, other = InsertPoint("exit edge", "loop"), InsertPoint("exit edge", "loop")
    lines += [point, other]
    ir.ret("double", first)
    for k in range(2):
        made: list = []
        IRBuilder(FreshNames(f"s{k}"), made, text=True).store("double", first, "%out", align=8)
        fill_at(lines, point, made)
    assert lines.index(point) == 3 and lines[1:3] == ["  store double %t$1, ptr %out, align 8"] * 2
    with pytest.raises(TypeError):
        "\n".join(lines)
    lines[:] = [item for item in lines if item is not point and item is not other]
    text = "\n".join(["define double @f(double %x, double %y, ptr %out) {", "entry:"] + lines + ["}"])
    llvm.verify(llvm.parse_assembly(text, "points"), generated=True)
    body = [parse_instruction("  ret double %x"), InsertPoint("frame push")]
    with pytest.raises(InternalError, match="unfilled frame push insertion point"):
        print_block("entry", body)


# (opcode, type, a, b, flags): identities with a variable operand, constant pairs that fit,
# and what must keep its instruction (wrapping, nuw on a negative constant, or/xor of two
# nonzero constants, a shift by the width, two variables)
FOLDS = [
    ("add", "i64", "%x", "0", ""), ("add", "i64", "0", "%x", "nsw"), ("sub", "i64", "%x", "0", ""),
    ("mul", "i64", "%x", "1", ""), ("mul", "i64", "1", "%x", "nuw"), ("mul", "i64", "%x", "0", ""),
    ("mul", "i32", "0", "%x", "nsw"), ("shl", "i64", "%x", "0", ""), ("or", "i64", "%x", "0", "disjoint"),
    ("xor", "i32", "0", "%x", ""), ("add", "i64", "24", "0", ""), ("mul", "i64", "3", "-8", "nsw"),
    ("sub", "i32", "5", "9", ""), ("shl", "i64", "3", "4", "nuw"), ("add", "i8", "100", "27", "nsw"),
    ("mul", "i64", "4611686018427387904", "2", ""), ("add", "i8", "100", "28", ""), ("sub", "i8", "-100", "29", ""),
    ("mul", "i64", "-1", "8", "nuw"), ("shl", "i32", "1", "32", ""), ("or", "i64", "1", "2", ""),
    ("add", "i64", "%x", "%y", ""), ("sub", "i64", "0", "%x", ""), ("mul", "i64", "%x", "2", ""),
    ("add", "double", "%x", "0", ""),
]
KEPT = {("mul", "i64", "4611686018427387904", "2", ""), ("add", "i8", "100", "28", ""),
        ("sub", "i8", "-100", "29", ""), ("mul", "i64", "-1", "8", "nuw"), ("shl", "i32", "1", "32", ""),
        ("or", "i64", "1", "2", ""), ("add", "i64", "%x", "%y", ""), ("sub", "i64", "0", "%x", ""),
        ("mul", "i64", "%x", "2", ""), ("add", "double", "%x", "0", "")}


@pytest.mark.parametrize("case", FOLDS, ids=lambda c: " ".join(x for x in c if x))
def test_integer_folds_agree_with_llvm(case):
    """A builder asked for `x + 0`, `x * 1`, `3 * -8`, … gives the value without an
    instruction, as LLVM's IRBuilder does; LLVM's own simplification of the instruction
    (instcombine) gives the same value. What would wrap keeps its instruction."""
    opcode, ty, a, b, flags = case
    body: list = []
    ir = IRBuilder(FreshNames(), body)
    got = ir.binop(opcode, ty, a, b, flags=flags)
    if case in KEPT:
        assert len(body) == 1 and got == body[0].result
        return
    assert body == [] and got.type == ty
    text = (f"define {ty} @f({ty} %x, {ty} %y) {{\nentry:\n  %r = {opcode} {flags + ' ' if flags else ''}"
            f"{ty} {a}, {b}\n  ret {ty} %r\n}}\n")
    module = llvm.parse_assembly(text, "fold")
    llvm.run_named_passes(module, ["instcombine"])
    ret = next(line for line in module.text().splitlines() if line.strip().startswith("ret "))
    assert ret.split()[-1] == got, (case, ret)


def test_a_named_result_is_never_folded():
    """A fixed name is a promise that the value exists under it: no folding then."""
    body: list = []
    ir = IRBuilder(FreshNames(), body)
    assert ir.binop("add", "i64", "%x", "0", name="%k") == "%k" and len(body) == 1
    assert ir.gep("i8", "%p", [("i64", "0")], name="%q") == "%q" and len(body) == 2
    assert ir.gep("i8", "%p", [("i64", "0")]) == "%p" and len(body) == 2
