"""The problems timed against peers and their data, generated exactly as the C harnesses do
(bench.h's xorshift generator, the same seeds and fill order), so gradients can be compared."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

MASK = (1 << 64) - 1


class BenchRandom:
    """bench.h's generator: bench_seed, bench_uniform (53 bits in [0, 1)), bench_fill."""

    def __init__(self, seed: int):
        self.state = (seed * 0x9E3779B97F4A7C15 + 1) & MASK

    def uniform(self) -> float:
        s = self.state
        s ^= (s << 13) & MASK
        s ^= s >> 7
        s ^= (s << 17) & MASK
        self.state = s
        return (s >> 11) * (1.0 / 9007199254740992.0)

    def fill(self, n: int, lo: float, hi: float) -> np.ndarray:
        return np.array([lo + (hi - lo) * self.uniform() for _ in range(n)], dtype=np.float64)


@dataclass(frozen=True)
class Problem:
    """One gradient timed in every framework. `kernel` is the C kernel that times ours (run with
    `c_args`), `params` the sizes (the C harness's defaults, or its --quick ones)."""

    key: str
    kernel: str
    params: dict
    quick_params: dict
    c_args: tuple = ()
    quick_c_args: tuple = ("--quick",)
    label: str = ""

    def sizes(self, quick: bool) -> dict:
        return self.quick_params if quick else self.params

    def args(self, quick: bool) -> list[str]:
        return list(self.quick_c_args if quick else self.c_args)

    def size_text(self, quick: bool) -> str:
        return "_".join(f"{k}{v}" for k, v in self.sizes(quick).items())


PROBLEMS = (
    Problem("gmm", "gmm", {"d": 10, "k": 25, "n": 1000}, {"d": 10, "k": 5, "n": 100}, label="GMM gradient"),
    Problem("norm_1e4", "norm", {"n": 10_000}, {"n": 1000}, ("--size=10000",), ("--quick", "--size=1000"),
            label="normalization n=1e4"),
    Problem("norm_1e5", "norm", {"n": 100_000}, {"n": 10_000}, ("--size=100000",), ("--quick", "--size=10000"),
            label="normalization n=1e5"),
    Problem("nbody", "nbody", {"bodies": 64, "steps": 50}, {"bodies": 16, "steps": 10}, label="n-body gradient"),
)
BY_KEY = {p.key: p for p in PROBLEMS}


# ---------------------------------------------------------------- data (as the C harnesses make it)

def gmm_data(d: int, k: int, n: int) -> dict:
    rng = BenchRandom(1)
    icf_size = d * (d + 1) // 2
    alphas = rng.fill(k, -1, 1)
    means = rng.fill(k * d, 0, 1).reshape(k, d)
    icf = rng.fill(k * icf_size, -0.5, 0.5).reshape(k, icf_size)
    x = rng.fill(n * d, 0, 1).reshape(n, d)
    return {"alphas": alphas, "means": means, "icf": icf, "x": x, "gamma": 1.0, "m": 0}


def gmm_constants(d: int, k: int, n: int, gamma: float, m: int) -> float:
    """The parameter-free terms of the objective: -n d/2 log 2pi - K C (Wishart normalizer)."""
    nn = d + m + 1
    log_gamma_d = 0.25 * d * (d - 1) * math.log(math.pi) + sum(math.lgamma(0.5 * nn + 0.5 * (1 - j))
                                                               for j in range(1, d + 1))
    c = nn * d * (math.log(gamma) - 0.5 * math.log(2.0)) - log_gamma_d
    return -n * d * 0.5 * math.log(2 * math.pi) - k * c


def lower_indices(d: int) -> tuple[np.ndarray, np.ndarray]:
    """(row, col) of the packed strict lower triangle, column by column (the C layout)."""
    rows, cols = [], []
    for col in range(d):
        for row in range(col + 1, d):
            rows.append(row)
            cols.append(col)
    return np.array(rows), np.array(cols)


def norm_data(n: int) -> dict:
    rng = BenchRandom(5)
    return {"x": rng.fill(n, -1, 1), "w": rng.fill(n, -1, 1)}


NBODY_DT, NBODY_SOFTENING2 = 0.01, 0.01


def nbody_data(bodies: int, steps: int) -> dict:
    rng = BenchRandom(4)
    mass = rng.fill(bodies, 0.5 / bodies, 1.5 / bodies)
    pos = rng.fill(3 * bodies, -1, 1).reshape(bodies, 3)
    vel = rng.fill(3 * bodies, -0.1, 0.1).reshape(bodies, 3)
    return {"mass": mass, "pos": pos, "vel": vel, "steps": steps, "dt": NBODY_DT}


def data(problem: Problem, quick: bool) -> dict:
    sizes = problem.sizes(quick)
    if problem.kernel == "gmm":
        return gmm_data(**sizes)
    if problem.kernel == "norm":
        return norm_data(**sizes)
    return nbody_data(**sizes)


# Which C gradient array (GRAD lines of `kernel --dump`) each peer result corresponds to, and
# how to flatten the peer's array into the C layout.
C_GRADIENTS = {"gmm": ("alphas", "means", "icf"), "norm": ("in",), "nbody": ("pos0", "vel0")}
