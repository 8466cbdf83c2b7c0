"""What both fits share: the spring chain built (once, cached) from spring.c, and the data."""
from __future__ import annotations

import os

import numpy as np

import enzyme_build

HERE = os.path.dirname(os.path.abspath(__file__))
N, STEPS, DT = 8, 200, 0.05
SPEC = "simulate(k[n], c, n, x0[n], steps, dt, trajectory[steps*n])"


def spring_module():
    """The generated package: spring.simulate (NumPy), .torch.simulate, .jax.simulate."""
    return enzyme_build.load(os.path.join(HERE, "spring.c"), exports=[SPEC], name="spring",
                             extra_cflags=["-O2"])


def observations(spring):
    """A trajectory of the chain with the true parameters: what the fits try to reproduce."""
    rng = np.random.default_rng(7)
    true_k = rng.uniform(0.5, 2.0, N)
    true_c = 0.3
    x0 = np.sin(np.linspace(0, np.pi, N))
    return true_k, true_c, x0, spring.simulate(true_k, true_c, x0, STEPS, DT)
