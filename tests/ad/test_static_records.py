"""Static records (cache.py: `prepare_static_records`, `_place_static_records`): loops whose
iteration count is known when they start keep their values on one tape record for all
iterations. The class: taping loops of every shape that gets one -- a stencil that never
grows the tape (columns from a base taken once), a loop counting from a value, a loop keeping
many values (rows), a loop whose callee tapes on the same tape (addresses through the tape's
data pointer each iteration), two-cell long doubles, a loop counting down; combined, split and
forward mode, at -O2, -O3 and with AD before optimization (tests/ad/programs/static_records.c).
The IR tests pin the layout each shape gets, each output verified by LLVM."""
from __future__ import annotations

import os
import re

import pytest
from ad_helpers import HERE
from ad_helpers import fold_strides, function_block, function_body
from test_cache_shapes import STENCIL_ARGS, differentiate

# reverse, split and forward for each input of the six members (5, 4, 3, 4, 3 and 6 inputs)
CHECKS = 3 * (5 + 4 + 3 + 4 + 3 + 6)


@pytest.mark.parametrize("opt,before", [("-O2", False), ("-O3", False), ("-O2", True)],
                         ids=["O2", "O3", "adbefore"])
def test_programs_of_the_class(build, run_ok, opt, before):
    source = os.path.join(HERE, "programs", "static_records.c")
    assert run_ok(build(source, opt=opt, ad_before_opt=before)) == CHECKS


def test_a_loop_that_never_grows_the_tape_stores_through_column_bases():
    fn = function_body(differentiate(STENCIL_ARGS), "diffe_stencil")
    step, point = function_block(fn, "step"), function_block(fn, "point")
    # the base is taken after the frame is reserved, once per entry into the loop
    assert re.search(r"%static\.off\$0 = call i64 @__enzyme_build_tape_frame\(ptr %tape\$, i64 %tb\$\d+\)\n"
                     r"  %static\.off\$0\$base = call ptr @__enzyme_build_tape_at\(ptr %tape\$, i64 %static\.off\$0\)",
                     step), step
    # two columns: the first at the base itself, the second at its offset from the base
    columns = re.findall(r"(%scol\$\d+) = getelementptr inbounds i8, ptr %static\.off\$0\$base, i64 %scol\$\d+", step)
    assert len(columns) == 1, step
    assert "@__enzyme_build_tape" not in point
    for col in ["%static.off$0$base"] + columns:
        assert re.search(rf"getelementptr inbounds i8, ptr {re.escape(col)}, i64 %soff\$\d+\n  store double", point)


def summing_loop(name: str, step: str) -> str:
    """`double @name(ptr %x, i64 %n)`: a counted loop loading %xi = x[i] and computing
    %s.next from it and the running %s by `step`, and @use_<name> taking its gradient."""
    return f"""define double @{name}(ptr %x, i64 %n) {{
entry:
  br label %body
body:
  %i = phi i64 [ 0, %entry ], [ %i.next, %body ]
  %s = phi double [ 0.0, %entry ], [ %s.next, %body ]
  %p = getelementptr inbounds double, ptr %x, i64 %i
  %xi = load double, ptr %p, align 8{step}
  %i.next = add nuw nsw i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %body
exit:
  ret double %s.next
}}
define double @use_{name}(ptr %x, ptr %dx, i64 %n) {{
entry:
  %r = call double (ptr, ...) @__enzyme_autodiff(ptr @{name}, ptr @enzyme_dup, ptr %x, ptr %dx, ptr @enzyme_const, i64 %n)
  ret double %r
}}
"""


GROWING = """
define double @sq(double %x) #7 {
entry:
  %e = call double @exp(double %x)
  %m = fmul double %e, %x
  ret double %m
}
declare double @exp(double)
""" + summing_loop("loop", """
  %sq = call double @sq(double %xi)
  %t = fmul double %sq, %s
  %s.next = fadd double %t, %xi""") + """
attributes #7 = { noinline nounwind }
"""


def test_a_loop_whose_callee_tapes_reads_the_data_pointer_after_the_call():
    fn = function_body(differentiate(GROWING), "diffe_loop")
    assert "$base" not in fn
    loop = function_block(fn, "body")
    call = loop.index("call double @augmented_sq(double %xi, ptr %tape$)")
    cells = [m.start() for m in re.finditer(r"= call ptr @__enzyme_build_tape_at\(ptr %tape\$", loop)]
    # %s and %sq; x[i] is read again (@sq, read from its body, writes nothing)
    assert len(cells) == 2 and min(cells) > call, loop


MANY = "declare double @sin(double)\n" + summing_loop("many", """
  %b = fmul double %xi, %s
  %c = call double @sin(double %b)
  %d = fmul double %c, %xi
  %e = call double @sin(double %d)
  %f = fmul double %e, %c
  %g = call double @sin(double %f)
  %h = fmul double %g, %b
  %s.next = fadd double %h, %s""")


def test_a_loop_keeping_many_values_is_laid_out_by_rows():
    fn = fold_strides(function_body(differentiate(MANY), "diffe_many"))
    entry, loop = function_block(fn, "entry"), function_block(fn, "body")
    stride = int(re.search(r"%tb\$\d+ = mul i64 %tc\$\d+, (\d+)\n  %static\.off\$0 = call", entry).group(1))
    assert stride > 4 * 8
    # each value at its byte in the iteration's row: positions are constant offsets from the
    # base (the first is the base itself), one step of a row per iteration
    positions = [int(p) for p in re.findall(r"%scol\$\d+ = getelementptr inbounds i8, ptr %static\.off\$0\$base, "
                                            r"i64 (\d+)\n", entry)]
    assert sorted([0] + positions) == list(range(0, stride, 8)), entry
    steps = re.findall(r"%soff\$\d+ = mul i64 %i, (\d+)", loop)
    assert steps == [str(stride)], loop
