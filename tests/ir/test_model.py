"""The IR model: parsing real clang IR (after O2 + instnamer) and the pieces the engine relies on."""
from __future__ import annotations

import os
import subprocess

import pytest

from enzyme_build import llvm
from enzyme_build.ir import make_name, parse_instruction, parse_module, split_top, tbaa_type

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "acceptance")


def optimized_text(source: str, tmp_path, extra=()) -> str:
    out = tmp_path / "x.ll"
    subprocess.run(["clang-22", "-O2", "-Xclang", "-disable-llvm-passes", "-S", "-emit-llvm", "-g",
                    "-I", EXAMPLES, *extra, source, "-o", str(out)], check=True)
    m = llvm.parse_assembly(out.read_text())
    llvm.optimize(m, 2, unroll=False, vectorize=False)
    llvm.run_named_passes(m, ["instnamer"])
    return m.text()


@pytest.mark.parametrize("name", ["norm", "split_mode", "relu3"])
def test_every_instruction_is_parsed_and_printed_back(tmp_path, name):
    text = optimized_text(os.path.join(EXAMPLES, name + ".c"), tmp_path)
    mod = parse_module(text)
    assert mod.text() == text if text.endswith("\n") else text + "\n"
    count = 0
    for fn in mod.functions.values():
        for inst in fn.instructions():
            count += 1
            assert inst.opcode
            # every local this instruction reads is defined in the function or is a parameter
            params = {p.name for p in fn.params}
            for v in inst.values():
                assert v in fn.defs or v in params, (fn.name, inst.text, v)
    assert count > 20


def test_instructions_by_opcode(tmp_path):
    """of_opcode (the index the call and alloca walks use) gives, for every opcode, exactly the
    instructions a full walk finds, in block order; an invoke is found as a call."""
    text = optimized_text(os.path.join(EXAMPLES, "norm.c"), tmp_path)
    text += """
declare void @g(ptr)
declare i32 @__gxx_personality_v0(...)
define void @inv(ptr %p) personality ptr @__gxx_personality_v0 {
entry:
  %a = alloca double, align 8
  invoke void @g(ptr %a)
          to label %ok unwind label %lp
ok:
  call void @g(ptr %p)
  ret void
lp:
  %l = landingpad { ptr, i32 } cleanup
  resume { ptr, i32 } %l
}
"""
    mod = parse_module(text)
    for fn in mod.functions.values():
        walked = list(fn.instructions())
        for op in {i.opcode for i in walked} | {"no such opcode"}:
            assert list(fn.of_opcode(op)) == [i for i in walked if i.opcode == op], (fn.name, op)
        assert sorted(map(id, fn.of_opcode("call", "alloca"))) == \
            sorted(id(i) for i in walked if i.opcode in ("call", "alloca"))
    calls = mod.functions["inv"].of_opcode("call")
    assert [i.callee for i in calls] == ["@g", "@g"] and calls[0].invoke_normal
    # fields the parser leaves unset share one empty tuple; set ones are lists
    ret = next(i for i in mod.functions["inv"].instructions() if i.opcode == "ret")
    assert ret.incoming == () and ret.cases == () and ret.arg_texts == () and ret.operands == ()
    assert isinstance(calls[1].arg_texts, list) and isinstance(calls[1].operands, list)


def test_instruction_details():
    i = parse_instruction('  %i17 = tail call fast double @llvm.fmuladd.f64(double %i16, double %i16, double %.089.i), !dbg !12')
    assert (i.result, i.opcode, i.type, i.callee) == ("%i17", "call", "double", "@llvm.fmuladd.f64")
    assert [v for _, v in i.operands] == ["%i16", "%i16", "%.089.i"] and i.metadata["!dbg"] == "!12"
    p = parse_instruction('  %x = phi double [ 0.000000e+00, %bb ], [ %"a b", %.lr.ph ]')
    assert p.incoming == [("0.000000e+00", "bb"), ('%"a b"', ".lr.ph")]
    s = parse_instruction('  switch i32 %k, label %d [\n    i32 0, label %a\n    i32 1, label %b\n  ]')
    assert s.targets == ["d", "a", "b"] and s.cases == [("0", "a"), ("1", "b")]
    g = parse_instruction('  %g = getelementptr inbounds nuw [4 x double], ptr %a, i64 0, i64 %i')
    assert g.source_type == "[4 x double]" and [v for _, v in g.operands] == ["%a", "0", "%i"]
    c = parse_instruction('  %r = call { double, double } (ptr, ...) @__enzyme_autodiff(ptr @f, double 0x3FF0000000000000)')
    assert c.type == "{ double, double }" and c.callee == "@__enzyme_autodiff"
    k = parse_instruction('  store double %v, ptr getelementptr inbounds (i8, ptr @g, i64 8), align 8, !tbaa !5')
    assert k.operands[1][1].startswith("getelementptr inbounds (") and k.metadata["!tbaa"] == "!5"
    assert split_top("i32 1, { i32, i32 } { i32 2, i32 3 }, ptr @x") == ["i32 1", "{ i32, i32 } { i32 2, i32 3 }", "ptr @x"]
    assert make_name("%", "%x", "sh") == "%x$sh" and make_name("%", '%"a b"', "d") == '%"a b$d"'


def test_tbaa_names(tmp_path):
    text = optimized_text(os.path.join(EXAMPLES, "norm.c"), tmp_path)
    mod = parse_module(text)
    kinds = {tbaa_type(mod, i.metadata.get("!tbaa")) for f in mod.functions.values()
             for i in f.instructions() if "!tbaa" in i.metadata}
    assert {"double", "int"} <= kinds


def test_substitute_values_replaces_whole_names_only():
    from enzyme_build.ir.model import substitute_values
    body = ' getelementptr inbounds double, ptr %p, i64 %i.x, !tbaa !3 ; %p.q @g @"a b"'
    out = substitute_values(body, {"%p": "%rc$1", "%i": "%rc$2", "%i.x": "%rc$3", '@"a b"': "@c", "@g": "@g"})
    assert out == ' getelementptr inbounds double, ptr %rc$1, i64 %rc$3, !tbaa !3 ; %p.q @g @c'
    # constants among the keys are replaced where they stand alone
    assert substitute_values("add i64 %a, 7", {"7": "%seven", "%a": "%b"}) == "add i64 %b, %seven"


def test_replace_pointer_operand_takes_the_first_whole_pointer():
    from enzyme_build.ir.model import replace_pointer_operand
    text = " getelementptr i8, ptr %p.1, ptr %p, ptr %p"
    assert replace_pointer_operand(text, "%p", "%p$sh") == " getelementptr i8, ptr %p.1, ptr %p$sh, ptr %p"
    assert replace_pointer_operand(text, "%q", "%q$sh") == text


def test_headers_globals_and_constants_are_read_by_the_one_parser():
    """What custom/collect.py reads of a module (rule signatures, registration globals)
    comes from the same parser as the engine's: function headers (balanced parameter list,
    attributes with parentheses after it), global initializers, aggregate constants."""
    from enzyme_build.ir.model import aggregate_items, global_initializer, header_signature
    assert header_signature('define internal fastcc { double, double } @"f x"(ptr noundef byval(%struct.S) '
                            'align 8 %a, double %b) #0 {') == \
        ('"f x"', "{ double, double }", ["ptr noundef byval(%struct.S) align 8 %a", "double %b"])
    assert header_signature("declare noundef nonnull align 8 dereferenceable(16) ptr @g(i64 noundef) "
                            "local_unnamed_addr memory(none)") == ("g", "ptr", ["i64 noundef"])
    assert header_signature("declare void @h(...)") == ("h", "void", ["..."])
    assert header_signature("declare <2 x double> @v(<2 x double>, <{ i8, ptr }>)")[1:] == \
        ("<2 x double>", ["<2 x double>", "<{ i8, ptr }>"])
    assert header_signature("attributes #0 = { nounwind }") is None
    assert global_initializer("@__enzyme_register_gradient_f = dso_local global [3 x ptr] "
                              "[ptr @f, ptr @aug, ptr @grad], align 16") == "[ptr @f, ptr @aug, ptr @grad]"
    assert global_initializer("@x = external global i32, align 4") is None
    assert global_initializer('@s = private unnamed_addr constant [4 x i8] c"sin\\00", align 1, !dbg !7') \
        == 'c"sin\\00"'
    assert aggregate_items("[ptr @f, ptr @aug]") == ["ptr @f", "ptr @aug"]
    assert aggregate_items("<{ ptr @f, ptr @g }>") == ["ptr @f", "ptr @g"]
    assert aggregate_items("{ ptr @f, ptr getelementptr (i8, ptr @g, i64 8) }") == \
        ["ptr @f", "ptr getelementptr (i8, ptr @g, i64 8)"]
    assert aggregate_items("ptr @f") is None
