"""Scratch arrays on the stack read again by the reverse sweep (cache.py `_stack_arrays`,
`_final_after`). In combined mode the reverse sweep runs in the function's own frame, so a
local array nothing writes after a load is read again there instead of taped at every read,
and its lifetime.end moves to the end of the reverse sweep (as a deferred free does). Arrays
written again later, declared inside a loop, or whose stack a VLA's stackrestore releases
keep being taped; split pieces (whose frame is gone between the pieces) tape them all.
The class, in tests/ad/programs/stack_scratch.c: a fixed-size array filled then read, a VLA,
an array refilled in a second phase, an array declared in a loop body, an array a callee
reads, an array updated in place step after step, a struct with an array field, and a 2-D
array read by a loop nest; combined and split mode (split also with the input overwritten
between the pieces), at -O0, -O2, -O3 and with AD before optimization."""
from __future__ import annotations

import os
import re

import pytest
from ad_helpers import HERE, function_body

CHECKS = 8 * 3 * 8
SOURCE = os.path.join(HERE, "programs", "stack_scratch.c")


@pytest.mark.parametrize("opt,before", [("-O0", False), ("-O2", False), ("-O3", False), ("-O2", True)],
                         ids=["O0", "O2", "O3", "adbefore"])
def test_programs_of_the_class(build, run_ok, opt, before):
    assert run_ok(build(SOURCE, opt=opt, ad_before_opt=before)) == CHECKS


def load_rows(plan: str) -> list[str]:
    return re.findall(r"^  \S+\s+%\S+\s+load\s+(.+)$", plan, re.M)


def test_final_stack_arrays_are_read_again(build, run_ok, tmp_path):
    run_ok(build(SOURCE, opt="-O2"))
    keep = tmp_path / "keep"
    plans = {p.split("\n", 1)[0]: p for p in (keep / "cache-plan.txt").read_text().split("\n\n") if p.strip()}

    def combined(name):
        return load_rows(plans[f"cache plan of @diffe_{name} (combined mode)"])

    for name in ("filled_then_read", "vla", "callee_reads", "in_struct", "matrix"):
        rows = combined(name)
        assert rows and all(r == "re-read from memory" for r in rows), (name, rows)
        split = load_rows(plans[f"cache plan of @augmented_{name} / @reverse_{name} (split mode)"])
        assert "re-read from memory" not in split, (name, split)   # the frame is gone in between
    # the first phase's reads come before the refill: kept; the second phase's are final
    rows = combined("refilled")
    assert "re-read from memory" in rows and any(r.startswith("kept") for r in rows), rows
    # an array declared in the loop body begins anew every iteration
    assert combined("per_iteration") and "re-read from memory" not in combined("per_iteration")
    # the re-read array's lifetime ends after the reverse sweep, not after the forward one
    out = (keep / "ad-output.ll").read_text()
    fn = function_body(out, "diffe_filled_then_read")
    exit_block = fn[fn.index("\nexit$:"):]
    assert "@llvm.lifetime.end" in exit_block and fn.count("@llvm.lifetime.end") == 1, fn
