"""Fixed-seed random programs (random_programs.py) through the AD stage, checked against FD."""
from __future__ import annotations

import pytest

from random_programs import gen


@pytest.mark.parametrize("seed", [3, 17, 26, 38, 61])
def test_random_program(tmp_path, build, run_ok, seed):
    src = tmp_path / f"random{seed}.c"
    src.write_text(gen(seed))
    assert run_ok(build(str(src))) == 10
