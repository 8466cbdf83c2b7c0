"""The same fit with JAX: jit(value_and_grad) runs the C simulation and its synthesized
reverse pass through XLA FFI custom calls; Adam is written out in jax.numpy."""
from __future__ import annotations

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from common import DT, N, STEPS, observations, spring_module  # noqa: E402

spring = spring_module()
true_k, true_c, x0, observed = observations(spring)


def loss(params):
    trajectory = spring.jax.simulate(params["k"], params["c"], x0, STEPS, DT)
    return jnp.mean((trajectory - observed) ** 2)


@jax.jit
def adam_step(params, moments, step, rate=0.05, beta1=0.9, beta2=0.999):
    value, grads = jax.value_and_grad(loss)(params)
    first, second = moments
    first = jax.tree.map(lambda m, g: beta1 * m + (1 - beta1) * g, first, grads)
    second = jax.tree.map(lambda s, g: beta2 * s + (1 - beta2) * g * g, second, grads)
    scale = rate * jnp.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
    params = jax.tree.map(lambda p, m, s: p - scale * m / (jnp.sqrt(s) + 1e-8), params, first, second)
    return params, (first, second), value


params = {"k": jnp.ones(N), "c": jnp.asarray(0.1)}
moments = (jax.tree.map(jnp.zeros_like, params), jax.tree.map(jnp.zeros_like, params))
for step in range(301):
    params, moments, value = adam_step(params, moments, step + 1)
    if step % 50 == 0:
        print(f"step {step:3d}  loss {float(value):.3e}")
print(f"damping: fitted {float(params['c']):.4f}, true {true_c:.4f}")
print(f"stiffness error: {np.abs(np.asarray(params['k']) - true_k).max():.2e}")
# the fitted chains of several damping values at once: vmap loops over them in C
batch = jax.vmap(lambda c: loss({"k": params["k"], "c": c}))(jnp.asarray([0.2, 0.3, 0.4]))
print("loss for c = 0.2, 0.3, 0.4:", " ".join(f"{float(v):.2e}" for v in batch))
