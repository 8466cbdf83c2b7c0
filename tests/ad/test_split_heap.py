"""Split pieces re-read the function's own heap blocks (cache.py `_final_after`): a block the
function mallocs, never lets escape and no longer writes once a loop reads it is read again by
the reverse piece, whose end now frees it (the pointer travels in the frame record), instead
of every read going to the tape. The class, in tests/ad/programs/split_heap.c: a table read in
a loop nest, a fresh scratch block per call of a helper called in a loop (each call's block
lives until its own reverse call), a block read before and after it is written again (only
the later reads are final), a realloc'd block (the same), a block freed in either branch, and
the blocks that must stay taped -- one per step freed in its loop, one escaping as an
integer, one read outside loops.
Every member: reverse against central differences, split against combined, and split with the
input overwritten between the pieces; at -O2, -O3 and with AD before optimization."""
from __future__ import annotations

import os
import re

import pytest
from ad_helpers import HERE, function_body

CHECKS = 3 * (5 + 4 + 3 + 4 + 4 + 3 + 5 + 3)
SOURCE = os.path.join(HERE, "programs", "split_heap.c")
REREAD = ("qtable", "scratch", "rewritten", "grown")
TAPED = ("per_step", "captured", "straight")
LOAD_ROW = re.compile(r"^  %\S+\s+%\S+\s+load\s+(.+)$", re.M)


@pytest.mark.parametrize("opt,before", [("-O2", False), ("-O3", False), ("-O2", True)],
                         ids=["O2", "O3", "adbefore"])
def test_programs_of_the_class(build, run_ok, opt, before):
    assert run_ok(build(SOURCE, opt=opt, ad_before_opt=before)) == CHECKS


def test_reverse_pieces_read_final_blocks_again_and_free_them(build, run_ok, tmp_path):
    run_ok(build(SOURCE, opt="-O2"))
    keep = tmp_path / "keep"
    plans = {p.split("\n", 1)[0]: p for p in (keep / "cache-plan.txt").read_text().split("\n\n") if p.strip()}
    out = (keep / "ad-output.ll").read_text()
    for name in REREAD:
        plan = plans[f"cache plan of @augmented_{name} / @reverse_{name} (split mode)"]
        assert "re-read from memory" in LOAD_ROW.findall(plan), plan
        # the augmented piece leaves the block alive; the reverse piece frees it at its end
        assert "@free(" not in function_body(out, f"augmented_{name}")
        rev = function_body(out, f"reverse_{name}")
        exit_block = rev[rev.index("\nexit$:"):]
        assert re.search(r"call void @free\(ptr [^)]*%\S+\)", exit_block), exit_block
    # written again after the first loop reading it / freed by realloc: those reads stay
    # taped, the last loop's are read again
    for name in ("rewritten", "grown"):
        plan = plans[f"cache plan of @augmented_{name} / @reverse_{name} (split mode)"]
        assert any(how.startswith("kept: static record") for how in LOAD_ROW.findall(plan)), plan
    for name in TAPED:
        plan = plans[f"cache plan of @augmented_{name} / @reverse_{name} (split mode)"]
        assert "re-read from memory" not in plan, plan
        assert "@free(" in function_body(out, f"augmented_{name}"), name
