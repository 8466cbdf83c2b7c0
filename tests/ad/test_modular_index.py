"""Indices computed by integer division and remainder (cache.py `_RECOMPUTABLE`): the reverse
sweep recomputes `(i + 1) % n`, `k / m`, `k % m` from their operands, as it does other index
arithmetic, instead of keeping one tape cell per iteration (it divides the operands the
forward sweep divided, so it cannot trap where the forward sweep did not). The class, in
tests/ad/programs/modular_index.c: a periodic stencil, a flat index split into row and column,
weights from a remainder of the IV, a circular buffer, signed division of negative offsets,
an unsigned remainder of a 64-bit hash; combined and split mode (split also with the input
overwritten between the pieces), at -O0, -O2, -O3 and with AD before optimization."""
from __future__ import annotations

import os
import re

import pytest
from ad_helpers import HERE

CHECKS = 6 * 3 * 8
SOURCE = os.path.join(HERE, "programs", "modular_index.c")


@pytest.mark.parametrize("opt,before", [("-O0", False), ("-O2", False), ("-O3", False), ("-O2", True)],
                         ids=["O0", "O2", "O3", "adbefore"])
def test_programs_of_the_class(build, run_ok, opt, before):
    assert run_ok(build(SOURCE, opt=opt, ad_before_opt=before)) == CHECKS


def test_divisions_are_recomputed_not_kept(build, run_ok, tmp_path):
    run_ok(build(SOURCE, opt="-O2"))
    plan = (tmp_path / "keep" / "cache-plan.txt").read_text()
    rows = re.findall(r"^  \S+\s+%\S+\s+([us](?:div|rem))\s+(.+)$", plan, re.M)
    assert len(rows) >= 10, plan   # every member's reverse sweep reads some
    assert all(how == "recomputed" for _, how in rows), [r for r in rows if r[1] != "recomputed"]
