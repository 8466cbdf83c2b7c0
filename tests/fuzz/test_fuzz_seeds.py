"""CI window of the differential fuzzer (see docs/fuzzing.md).

A fixed set of seeds that pass in every configuration is built and judged by the same
oracle as `tests/fuzz/run.py`; any wrong gradient, crash, internal error, refusal or
timeout fails the test.  Failing seeds found by fuzz runs live in tests/fuzz/findings/ as
strict xfails, one per finding report (findings/fuzz-NN.md): when the engine is fixed,
the xfail turns into an unexpected pass and the marker must be removed.
"""
from __future__ import annotations

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run as fuzz  # noqa: E402

# Seeds that are `ok` in O0, O2, O3 and adbefore in the run recorded in docs/fuzzing.md,
# and the seeds of fixed findings (14: fuzz-02, 136: fuzz-08, an overlapping memmove;
# 9, 3, 17, 353: fuzz-01/03/05/07, doubles moved through integers; 22: fuzz-04, side tables
# of loops in sequence; 1003, 1005, 1016: copies through uint64_t once refused; 253 and
# 1046: fuzz-06 and a wrong O2 result, both the generator's strict-aliasing violation).
CI_SEEDS = [0, 1, 2, 4, 5, 6, 7, 8, 12, 15, 18, 20, 21, 26, 30, 33, 34, 35, 47, 50, 14, 136,
            9, 3, 17, 353, 22, 1003, 1005, 1016, 253, 1046,
            11, 55, 102,   # programs with vector statements
            1581, 1582,    # side tables of a one-block loop with a data-dependent trip count
            6036,          # fuzz-09: a shadow memmove LLVM 22's MemCpyOpt deleted (forward mode, O3)
            6002, 6018, 6020,   # pointers returned inside structs: span, pointer pair, forwarded span
            6004, 6028,    # fuzz-10: a constructor returning a filled block (forward mode lost it)
            7515, 7532, 7646,   # char copies of doubles: memcpys before small loops are unrolled
            7926,          # fuzz-11: a 16-byte load GVN cut into doubles (an i128 carrier)
            8259,          # fuzz-12: known doubles copied over active ones as an i64 constant
            10090, 10152, 10183,   # fuzz-13: split mode kept a uint64_t carrying a double as a double
            12324,         # fuzz-14: a word merged by a phi, then read as a double
            13642,         # fuzz-15: fabs of a word merged from a double and a load
            14145,         # fuzz-16: a char copy between buffers an OpenMP region captured
            15609,         # fuzz-17: a firstprivate double whose region main forks with a constant
            19368,         # fuzz-18: a dead word load typed the bytes as an integer (AD before opt)
            22273,         # fuzz-19: a copysign on bits whose magnitude was picked on a branch (-O0)
            23978,         # fuzz-20: one counter modulo 16 and modulo 4 (LLVM 22's vectorizer)
            25926, 25935,  # fuzz-21: global objects behind a noinline accessor (shadows loaded from primal memory)
            26357, 26405,  # fuzz-22: a VLA whose scope ends before a helper's frame reuses its shadow's stack
            26351, 26355]  # the eighteenth stream: a memalign'd buffer, records sorted with qsort
CONFIGS = ["O0", "O2", "O3", "adbefore"]


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("seed", CI_SEEDS)
def test_fuzz_seed(tmp_path, seed, config):
    res = fuzz.run_one(seed, config, str(tmp_path))
    assert res["outcome"] == "ok", f"seed {seed} {config}: {res['outcome']}: {res['detail']}"


# (finding report, seed, config) for failures found by fuzz runs; sources in findings/.
FINDINGS: list[tuple[str, int, str]] = []


def _finding_params():
    for report, seed, config in FINDINGS:
        yield pytest.param(seed, config, id=f"{report}-seed{seed}-{config}",
                           marks=pytest.mark.xfail(strict=True, reason=f"see finding {report}"))


@pytest.mark.parametrize("seed,config", list(_finding_params()))
def test_fuzz_finding(tmp_path, seed, config):
    # The committed source must still be what the generator produces for the seed.
    with open(os.path.join(HERE, "findings", f"seed{seed}.c")) as fh:
        assert fh.read() == fuzz.gen(seed)
    res = fuzz.run_one(seed, config, str(tmp_path))
    assert res["outcome"] == "ok", f"seed {seed} {config}: {res['outcome']}: {res['detail']}"
