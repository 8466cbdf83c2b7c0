"""Functions kept out of a pre-AD `opt` run (`ad/optrun.py`: `keep_out` gives them `optnone
noinline` and a marker, `let_in` takes those away again).

A function with no attributes of its own ends up, after `opt` has gathered the added
attributes into a group, in a group holding nothing but them; `let_in` emptied it to
`attributes #9 = { }`, which LLVM's parser rejects ("attribute group has no attributes"):
a random program of the differential fuzzer (seed 26893, with AD before optimization) was
refused with invalid IR. The emptied group now keeps a neutral string attribute.
"""
from __future__ import annotations

from ad_helpers import LAYOUT, verified

from enzyme_build import llvm
from enzyme_build.ad.optrun import keep_out, let_in


def test_a_function_without_attributes_round_trips():
    text = "\n".join([LAYOUT, "define double @bare(double %x) {", "  %y = fmul double %x, %x", "  ret double %y", "}",
                      "define double @caller(double %x) #0 {", "  %r = call double @bare(double %x)", "  ret double %r",
                      "}", "attributes #0 = { nounwind }", ""])
    kept = llvm.parse_assembly(keep_out(text, {"@bare"}), "kept")
    gathered = kept.text()          # LLVM's printer puts the added attributes into a group
    assert '"enzyme-build-kept-out"' in gathered and "optnone" in gathered
    back = let_in(gathered)
    verified(back)
    groups = [line for line in back.split("\n") if line.startswith("attributes #")]
    assert groups and not any("= { }" in g for g in groups), groups
    assert not any("optnone" in g or "enzyme-build-kept-out" in g for g in groups), groups
    # the caller's own attributes are untouched
    assert any("nounwind" in g for g in groups), groups
