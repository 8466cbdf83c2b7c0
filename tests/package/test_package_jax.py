"""The generated JAX layer: FFI custom calls under jit (no host callback), grad, jvp, jacfwd,
jacrev, vmap (nested, shared operands), check_grads in both modes, bad arguments."""
from __future__ import annotations

from package_helpers import run_script

PRELUDE = """
import jax
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
import numpy as np
from jax.test_util import check_grads
import physics
J = physics.jax
"""


def test_jax_jit_lowers_to_ffi_custom_calls(physics):
    out = run_script(PRELUDE + """
x = jnp.linspace(0.1, 2.0, 5)
text = jax.jit(jax.grad(J.energy)).lower(x, 1.5).as_text()
assert 'physics_energy_reverse' in text and 'custom_call' in text, text
assert 'callback' not in text
assert np.isclose(jax.jit(J.energy)(x, 1.5), physics.energy(np.asarray(x), 1.5))
print("ok")
""", physics)
    assert out.strip() == "ok"


def test_jax_derivatives_check_grads_and_match_numpy(physics):
    out = run_script(PRELUDE + """
rng = np.random.default_rng(1)
x = jnp.asarray(rng.uniform(-1, 2, 6))
check_grads(J.energy, (x, 1.5), order=1, modes=("fwd", "rev"))
check_grads(J.residual, (x,), order=1, modes=("fwd", "rev"))
check_grads(J.damp, (x, 0.3), order=1, modes=("fwd", "rev"))
A = jnp.asarray(rng.normal(size=12)); idx = jnp.array([1, 2, 5], dtype=jnp.int32)
check_grads(lambda A, s: J.gather(A, 4, idx, s), (A, 2.0), order=1, modes=("fwd", "rev"))

gx, gk = jax.jit(jax.grad(J.energy, argnums=(0, 1)))(x, 1.5)
nx, nk = physics.energy.vjp(np.asarray(x), 1.5, cotangents=[1.0])
assert np.allclose(gx, nx) and np.isclose(gk, nk)
forward, reverse = jax.jit(jax.jacfwd(J.residual))(x), jax.jit(jax.jacrev(J.residual))(x)
assert forward.shape == (6, 6) and np.allclose(forward, reverse)

# composition with jax.numpy, and a 2-D array for a flat C array
loss = lambda x: jnp.sum(J.residual(jnp.tanh(x)) ** 2) + J.energy(x, 0.5)
check_grads(loss, (x,), order=1, modes=("fwd", "rev"))
M = jnp.reshape(A, (4, 3))
assert jax.grad(lambda M: J.gather(M, 4, idx, 2.0))(M).shape == (4, 3)

# float32 without x64 semantics: energyf takes float
x32 = jnp.asarray(rng.uniform(-1, 1, 4), dtype=jnp.float32)
g32 = jax.grad(J.energyf)(x32, jnp.float32(2.0))
# a Python float for a C float takes float32 (weak type), also as a differentiated argument
assert np.isclose(jax.grad(J.energyf, argnums=1)(x32, 2.0), np.sum(np.asarray(x32) ** 2), rtol=1e-5)
assert g32.dtype == jnp.float32 and np.allclose(g32, 4 * x32 + np.cos(x32), rtol=1e-5)

# an int result passes through and differentiation around it works
assert int(J.count_positive(x)) == int(np.sum(np.asarray(x) > 0))
print("ok")
""", physics)
    assert out.strip() == "ok"


def test_jax_second_order_forward_over_reverse(physics):
    out = run_script(PRELUDE + """
rng = np.random.default_rng(3)
x = jnp.asarray(rng.uniform(-1, 2, 5))
def gradient(x, k):
    return physics.energy.vjp(np.asarray(x), k, cotangents=[1.0])[0]
h = 1e-5
fd = np.array([(gradient(x + h * e, 1.5) - gradient(x - h * e, 1.5)) / (2 * h) for e in np.eye(5)])
assert np.allclose(jax.jit(jax.hessian(J.energy))(x, 1.5), fd, atol=1e-6)
# order 2 through forward over reverse: the gradient's own derivatives checked in forward mode
idx = jnp.array([1, 2, 5], dtype=jnp.int32)
cases = [(J.energy, (x, 1.5)), (J.residual, (x,)), (J.damp, (x, 0.3)),
         (lambda A, s: J.gather(A, 4, idx, s), (jnp.asarray(rng.normal(size=12)), 2.0))]
for f, args in cases:
    scalar = lambda *a: jnp.sum(jnp.sin(jnp.atleast_1d(f(*a))))
    check_grads(jax.grad(scalar, argnums=tuple(range(len(args)))), args, order=1, modes=("fwd",))
# Hessians of a batch
assert jax.vmap(jax.hessian(J.energy), in_axes=(0, None))(jnp.stack([x, x + 1]), 1.5).shape == (2, 5, 5)
print("ok")
""", physics)
    assert out.strip() == "ok"


def test_jax_vmap_batches_in_c(physics):
    out = run_script(PRELUDE + """
rng = np.random.default_rng(2)
X = jnp.asarray(rng.uniform(-1, 2, (3, 5)))
ks = jnp.asarray([0.5, 1.0, 2.0])
each = np.array([physics.energy(np.asarray(X[i]), float(ks[i])) for i in range(3)])
assert np.allclose(jax.vmap(J.energy)(X, ks), each)
assert np.allclose(jax.jit(jax.vmap(J.energy, in_axes=(0, None)))(X, 1.0),
                   [physics.energy(np.asarray(X[i]), 1.0) for i in range(3)])
assert np.allclose(jax.vmap(J.energy, in_axes=(None, 0))(X[0], ks),
                   [physics.energy(np.asarray(X[0]), float(k)) for k in ks])
# batch axis not in front, and vmap of grad, jacrev and jvp
assert np.allclose(jax.vmap(J.residual, in_axes=1, out_axes=1)(X.T), jax.vmap(J.residual)(X).T)
G = jax.vmap(jax.grad(J.energy))(X, ks)
for i in range(3):
    assert np.allclose(G[i], physics.energy.vjp(np.asarray(X[i]), float(ks[i]), cotangents=[1.0])[0])
Jr = jax.vmap(jax.jacrev(J.residual))(X)
Jf = jax.vmap(jax.jacfwd(J.residual))(X)
assert Jr.shape == (3, 5, 5) and np.allclose(Jr, Jf)
# nested vmap with an operand batched only at the outer level
XX = jnp.stack([X, X + 1.0])
nested = jax.vmap(jax.vmap(J.energy, in_axes=(0, None)), in_axes=(0, 0))(XX, jnp.asarray([1.0, 3.0]))
assert nested.shape == (2, 3)
assert np.isclose(nested[1, 2], physics.energy(np.asarray(XX[1, 2]), 3.0))
nested = jax.vmap(jax.vmap(J.energy, in_axes=(None, 0)), in_axes=(0, None))(X, ks)
assert np.isclose(nested[2, 1], physics.energy(np.asarray(X[2]), float(ks[1])))
print("ok")
""", physics)
    assert out.strip() == "ok"


def test_jax_bad_arguments(physics):
    out = run_script(PRELUDE + """
x = jnp.linspace(0, 1, 6)
cases = {
    "float32 for double": lambda: J.energy(x.astype(jnp.float32), 1.0),
    "wrong size": lambda: J.gather(jnp.zeros(11), 4, jnp.zeros(3, jnp.int32), 1.0),
    "traced int": lambda: jax.jit(lambda A, n: J.gather(A, n, jnp.zeros(3, jnp.int32), 1.0))(jnp.zeros(12), 4),
    "missing": lambda: J.energy(x),
    "reverse over reverse": lambda: jax.jacrev(jax.grad(J.energy))(x, 1.0),
    "forward over forward": lambda: jax.jacfwd(jax.jacfwd(J.energy))(x, 1.0),
}
for what, call in cases.items():
    try:
        call()
    except (TypeError, ValueError, NotImplementedError) as err:
        print(what, "->", type(err).__name__, str(err).splitlines()[0])
    else:
        raise AssertionError(what)
print("ok")
""", physics)
    assert out.strip().endswith("ok")
    assert "must have dtype float64" in out and "jax_enable_x64" in out
    assert "static under jit" in out


def test_jax_many_calls_do_not_grow_memory(physics):
    out = run_script(PRELUDE + """
import resource
x = jnp.linspace(0.0, 1.0, 1000)
step = jax.jit(lambda x: jax.grad(lambda x: J.energy(J.residual(x), 1.0))(x))
batched = jax.jit(jax.vmap(J.energy, in_axes=(0, None)))
X = jnp.stack([x, x + 1.0, x - 1.0])
for _ in range(500):
    step(x).block_until_ready(); batched(X, 2.0).block_until_ready(); J.energy(x, 1.0)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
for _ in range(5000):
    step(x).block_until_ready(); batched(X, 2.0).block_until_ready(); J.energy(x, 1.0)
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(grown)
assert grown < 8192, grown
""", physics)
    assert int(out.strip()) < 8192


def test_two_builds_of_one_package_in_one_process(tmp_path):
    (tmp_path / "sq.c").write_text("double sq(double x) { return SCALE * x * x; }\n")
    out = run_script("""
import jax
jax.config.update("jax_enable_x64", True)
import enzyme_build
one = enzyme_build.load("sq.c", exports=["sq(x)"], extra_cflags=["-DSCALE=1.0"])
two = enzyme_build.load("sq.c", exports=["sq(x)"], extra_cflags=["-DSCALE=2.0"])
assert one is not two
print(float(jax.jit(jax.grad(one.jax.sq))(3.0)), float(jax.jit(jax.grad(two.jax.sq))(3.0)))
""", str(tmp_path), env_extra={"ENZYME_BUILD_CACHE": str(tmp_path / "cache")})
    assert out.split() == ["6.0", "12.0"]
