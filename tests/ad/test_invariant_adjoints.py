"""Adjoints of loop-invariant values (reverse.py `accumulation_flags`) and quotients by them
(cache.py `_recompute`). A value read in every iteration of a loop -- a norm, a scale, a mean,
a struct's field, an outer loop's element -- gets one contribution per iteration: its adjoint
is a running sum the engine may add up in any order, so the accumulation carries `reassoc` and
the reverse loop vectorizes (one add latency per iteration otherwise: the Enzyme paper's
normalization ran its reverse loop scalar). A quotient of re-readable data by such a value
(`x[i] / mag`) is recomputed in the reverse sweep instead of kept in a tape cell per iteration.
The class, in tests/ad/programs/invariant_adjoints.c: normalization of the input and of a local
copy, an affine map with scalar parameters, standardization, a struct's fields read by a
callee's loop, a reciprocal with an invariant numerator, an outer loop's element scaling an
inner loop, and single precision; combined and split mode (split also with the input
overwritten between the pieces), at -O0, -O2, -O3 and with AD before optimization."""
from __future__ import annotations

import os
import re

import pytest
from ad_helpers import HERE

CHECKS = 7 * 3 * 8 + 8
SOURCE = os.path.join(HERE, "programs", "invariant_adjoints.c")


@pytest.mark.parametrize("opt,before", [("-O0", False), ("-O2", False), ("-O3", False), ("-O2", True)],
                         ids=["O0", "O2", "O3", "adbefore"])
def test_programs_of_the_class(build, run_ok, opt, before):
    assert run_ok(build(SOURCE, opt=opt, ad_before_opt=before)) == CHECKS


def functions(text: str) -> dict[str, str]:
    return {m.group(1): m.group(0) for m in re.finditer(r"^define [^\n]*@([\w.$]+)\(.*?^}$", text, re.M | re.S)}


def test_accumulations_into_adjoints_may_reassociate(build, run_ok, tmp_path):
    run_ok(build(SOURCE, opt="-O2"))
    out = (tmp_path / "keep" / "ad-output.ll").read_text()
    fns = functions(out)
    # every accumulation into an adjoint slot or shadow memory carries reassoc; nothing else does
    for name, body in fns.items():
        if name.startswith(("diffe_", "reverse_")):
            for line in re.findall(r"^\s*%(?:da|dm)\$\d+ = fadd [^\n]*", body, re.M):
                assert " reassoc " in line, (name, line)
    primal_adds = [line for name in ("normalized", "affine", "standardized") for line in
                   re.findall(r"^\s*%i\d+ = fadd [^\n]*", fns[f"augmented_{name}"], re.M)]
    assert primal_adds and not any("reassoc" in line for line in primal_adds)


def test_reverse_loops_of_invariant_adjoints_vectorize(build, run_ok, tmp_path):
    """After the final pipeline the reverse loops sum the invariant's adjoint in vector lanes
    (an llvm.vector.reduce.fadd), in combined and in split mode."""
    from enzyme_build import llvm
    run_ok(build(SOURCE, opt="-O2", extra=("-fno-math-errno",)))   # sqrt pure: mag() is hoisted
    module = llvm.parse_assembly((tmp_path / "keep" / "ad-output.ll").read_text(), "ad-output")
    llvm.optimize(module, 2)
    llvm.verify(module, generated=True)
    fns = functions(module.text())
    for name in ("normalized", "normalized_copy", "affine", "standardized"):
        for piece in (f"diffe_{name}", f"reverse_{name}"):
            assert "@llvm.vector.reduce.fadd" in fns[piece], piece
    assert "@llvm.vector.reduce.fadd" in fns["diffe_normalized_float"]


def test_quotients_by_invariants_are_recomputed(build, run_ok, tmp_path):
    run_ok(build(SOURCE, opt="-O2", extra=("-fno-math-errno",)))
    plans = {p.split("\n", 1)[0]: p for p in (tmp_path / "keep" / "cache-plan.txt").read_text().split("\n\n")
             if p.strip()}
    for name in ("normalized", "reciprocal"):
        rows = re.findall(r"^  \S+\s+%\S+\s+fdiv\s+(.+)$", plans[f"cache plan of @diffe_{name} (combined mode)"], re.M)
        assert all(r == "recomputed" for r in rows), (name, rows)
    # the denominator's partial -q/m is built from the re-read numerator and the hoisted 1/m,
    # so normalization's reverse sweep divides nothing but that reciprocal
    body = functions((tmp_path / "keep" / "ad-output.ll").read_text())["diffe_normalized"]
    reverse = body[body.index("rev$"):]
    divisions = re.findall(r"= fdiv [^\n]*", reverse)
    assert divisions and all(re.match(r"= fdiv (reassoc )?double (1\.0+e\+00|0x3FF0000000000000), ", d) for d in divisions), divisions
