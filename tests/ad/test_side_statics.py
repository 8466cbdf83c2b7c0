"""Side records of static inner loops (cache.py `_place_side_statics`): values every iteration
of an outer loop computes alike, in an inner loop whose trip count is known when it starts,
get one record on the side stack for all the inner loop's iterations -- reserved in its
preheader, indexed by the IV, popped whole when the reverse sweep enters the loop -- so the
inner loop pushes nothing per iteration (a time stepper's `r * kappa[i]` in split mode kept
the space loop scalar). The class, in tests/ad/programs/side_statics.c: a heat stepper, two
inner loops per step, kept values computed in branches, an inner loop counting from 2, a nest
whose outer inner loop keeps values too (it falls back to per-iteration pushes), a kept call,
an outer loop keeping a value of its own before the inner record;
combined and split mode (split also with the input overwritten between the pieces), at -O0,
-O2, -O3 and with AD before optimization."""
from __future__ import annotations

import os
import re

import pytest
from ad_helpers import HERE, function_body, function_block

CHECKS = 3 * (5 + 4 + 6 + 4 + 3 + 5 + 4)
SOURCE = os.path.join(HERE, "programs", "side_statics.c")
SIDE_ROW = re.compile(r"^  %(\S+)\s+%\S+\s+.+?\s{2,}kept: side table of loop %\S+$", re.M)


@pytest.mark.parametrize("opt,before", [("-O0", False), ("-O2", False), ("-O3", False), ("-O2", True)],
                         ids=["O0", "O2", "O3", "adbefore"])
def test_programs_of_the_class(build, run_ok, opt, before):
    assert run_ok(build(SOURCE, opt=opt, ad_before_opt=before)) == CHECKS


def test_inner_loops_keep_their_side_values_without_pushing(build, run_ok, tmp_path):
    run_ok(build(SOURCE, opt="-O2"))
    keep = tmp_path / "keep"
    plans = {p.split("\n", 1)[0]: p for p in (keep / "cache-plan.txt").read_text().split("\n\n") if p.strip()}
    out = (keep / "ad-output.ll").read_text()
    pieces = {"heat": 0, "two_inner": 0, "branchy": 0, "from_two": 0, "calls": 0}
    for name in pieces:
        for title, forward in ((f"cache plan of @diffe_{name} (combined mode)", f"diffe_{name}"),
                               (f"cache plan of @augmented_{name} / @reverse_{name} (split mode)",
                                f"augmented_{name}")):
            labels = set(SIDE_ROW.findall(plans[title]))
            if forward == "diffe_heat":
                # combined mode re-reads x and recomputes `r * x[i % n]` (the remainder too):
                # the value every step computes alike is not kept at all
                assert not labels and "side table" not in plans[title], plans[title]
                continue
            assert labels, plans[title]
            fn = function_body(out, forward)
            for label in labels:   # the forward sweep stores into the record, it does not push
                assert "@__enzyme_build_side_push" not in function_block(fn, label), (forward, label)
            # one reservation per entry into each inner loop, popped whole by the reverse sweep
            assert fn.count("@__enzyme_build_side_push(") >= 1
            reverse = function_body(out, forward.replace("augmented_", "reverse_"))
            pops = re.findall(r"call ptr @__enzyme_build_tape_pop\(ptr %side\$, i64 %\S+\)", reverse)
            assert pops, reverse
    # the nest: its outer inner loop's values in split mode are pushed per iteration, since
    # the inner loop's record may move the stack while it runs
    split_nested = plans["cache plan of @augmented_nested / @reverse_nested (split mode)"]
    fn = function_body(out, "augmented_nested")
    assert any("@__enzyme_build_side_push" in function_block(fn, label) for label in SIDE_ROW.findall(split_nested))
