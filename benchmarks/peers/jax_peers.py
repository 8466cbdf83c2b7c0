"""JAX implementations of the peer gradients (jit, float64). Import only after run_peers.py has
set the single-thread environment: XLA reads XLA_FLAGS when it starts."""
from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.scipy.special import logsumexp

import problems

jax.config.update("jax_enable_x64", True)
NAME, VERSION = "JAX", jax.__version__


def gmm_gradient_fn(d: int, k: int, n: int):
    rows, cols = problems.lower_indices(d)
    constant = problems.gmm_constants(d, k, n, 1.0, 0)

    def objective(alphas, means, icf, x):
        qdiag = jnp.exp(icf[:, :d])
        sum_qs = jnp.sum(icf[:, :d], axis=1)
        q = jnp.zeros((k, d, d)).at[:, rows, cols].set(icf[:, d:])
        q = q + jax.vmap(jnp.diag)(qdiag)
        xc = x[:, None, :] - means[None, :, :]
        qx = jnp.einsum("kij,nkj->nki", q, xc)
        main = alphas[None, :] + sum_qs[None, :] - 0.5 * jnp.sum(qx * qx, axis=-1)
        prior = 0.5 * (jnp.sum(qdiag * qdiag) + jnp.sum(icf[:, d:] ** 2))
        return constant + jnp.sum(logsumexp(main, axis=1)) - n * logsumexp(alphas) + prior

    grad = jax.jit(jax.grad(objective, argnums=(0, 1, 2)))
    return lambda data: grad(data["alphas"], data["means"], data["icf"], data["x"])


def norm_gradient_fn(n: int):
    def objective(x, w):
        return jnp.dot(w, x / jnp.sqrt(jnp.sum(x * x)))
    grad = jax.jit(jax.grad(objective))
    return lambda data: (grad(data["x"], data["w"]),)


def nbody_gradient_fn(bodies: int, steps: int):
    eps2 = problems.NBODY_SOFTENING2
    upper = jnp.triu(jnp.ones((bodies, bodies)), k=1)

    def objective(pos, vel, mass, dt):
        def accelerations(p):
            diff = p[None, :, :] - p[:, None, :]          # x_j - x_i at [i, j]
            r2 = jnp.sum(diff * diff, axis=-1) + eps2
            return jnp.sum((mass[None, :] / (r2 * jnp.sqrt(r2)))[:, :, None] * diff, axis=1)

        def step(_, state):
            p, v = state
            v = v + dt * accelerations(p)
            return p + dt * v, v

        p, v = jax.lax.fori_loop(0, steps, step, (pos, vel))
        diff = p[None, :, :] - p[:, None, :]
        inv = 1 / jnp.sqrt(jnp.sum(diff * diff, axis=-1) + eps2)
        kinetic = 0.5 * jnp.sum(mass * jnp.sum(v * v, axis=1))
        return kinetic - jnp.sum(upper * mass[:, None] * mass[None, :] * inv)

    grad = jax.jit(jax.grad(objective, argnums=(0, 1)))
    return lambda data: grad(data["pos"], data["vel"], data["mass"], data["dt"])


def gradient_fn(problem, sizes: dict):
    """A function data -> tuple of gradient arrays (in problems.C_GRADIENTS order)."""
    make = {"gmm": gmm_gradient_fn, "norm": norm_gradient_fn, "nbody": nbody_gradient_fn}[problem.kernel]
    return make(**sizes)


def to_device(data: dict) -> dict:
    return {k: (jnp.asarray(v) if hasattr(v, "shape") else v) for k, v in data.items()}


def block(result) -> None:
    jax.block_until_ready(result)
