"""The generated TensorFlow layer, in fresh interpreters with real TensorFlow: gradients against
finite differences, float32, tf.function, persistent tapes, second derivatives and forward mode,
bad tensors as exceptions, no memory growth over many calls, and the ImportError when
TensorFlow is missing.

TensorFlow is part of the test environment (`./bootstrap test` installs it); when it cannot be
imported these tests fail, except outside CI where they skip with the install command."""
from __future__ import annotations

import importlib.util
import os

import pytest

from package_helpers import run_script

if importlib.util.find_spec("tensorflow") is None and \
        os.environ.get("CI", "").lower() in ("", "0", "false"):
    pytest.skip("TensorFlow is not installed (pip install tensorflow-cpu, or ./bootstrap test)",
                allow_module_level=True)

QUIET = {"TF_CPP_MIN_LOG_LEVEL": "2", "CUDA_VISIBLE_DEVICES": ""}


def run_tf(script, path, **kwargs):
    return run_script(script, path, env_extra=QUIET, **kwargs)


def test_tf_gradients_match_finite_differences(physics):
    out = run_tf("""
import numpy as np
import tensorflow as tf
import physics
T = physics.tf
rng = np.random.default_rng(0)

def fd(f, args, i, eps=1e-6):
    # central differences of a scalar function in argument i
    base = [np.array(a, dtype=np.float64) for a in args]
    grad = np.zeros_like(base[i])
    flat = grad.reshape(-1)
    for j in range(flat.size):
        plus = [a.copy() for a in base]; minus = [a.copy() for a in base]
        plus[i].reshape(-1)[j] += eps; minus[i].reshape(-1)[j] -= eps
        flat[j] = (f(*plus) - f(*minus)) / (2 * eps)
    return grad

x = tf.constant(rng.random(6))
k = tf.Variable(1.3, dtype=tf.float64)
w = tf.constant(rng.random(6))
A = tf.constant(rng.random((3, 4)))
idx = tf.constant([1, 2, 5], tf.int32)

# a scalar function of several inputs through several exports (result, out array, in-out array)
def loss_tf(x, k, A):
    return (T.energy(x, k) + tf.reduce_sum(w * T.residual(x)) + tf.reduce_sum(w * T.damp(x, k))
            + T.gather(A, 4, idx, k))
def loss_np(x, k, A):
    e = physics.energy(x, float(k)) + np.sum(w.numpy() * physics.residual(x))
    e += np.sum(w.numpy() * physics.damp(x, float(k)))
    return e + physics.gather(A.reshape(-1), 4, idx.numpy(), float(k))

with tf.GradientTape() as tape:
    tape.watch([x, A])
    value = loss_tf(x, k, A)
gx, gk, gA = tape.gradient(value, [x, k, A])
args = [x.numpy(), k.numpy(), A.numpy()]
assert np.isclose(value.numpy(), loss_np(*args), rtol=1e-12)
assert gx.shape == x.shape and gA.shape == A.shape and gk.shape == ()
for got, i in ((gx, 0), (gk, 1), (gA, 2)):
    expected = fd(loss_np, args, i)
    assert got.dtype == tf.float64
    assert np.allclose(got.numpy(), expected, rtol=1e-6, atol=1e-7), (i, got, expected)

# a vector output with a non-trivial cotangent: the vector-Jacobian product of residual
with tf.GradientTape() as tape:
    tape.watch(x)
    r = T.residual(x)
vjp = tape.gradient(r, x, output_gradients=w)
assert np.allclose(vjp.numpy(), physics.residual.vjp(x.numpy(), cotangents=[w.numpy()])[0], rtol=1e-12)

# the integer result has no gradient
with tf.GradientTape() as tape:
    tape.watch(x)
    c = T.count_positive(x - 0.5)
assert c.dtype == tf.int32 and int(c) == int(np.sum(x.numpy() > 0.5))
assert tape.gradient(c, x) is None

# keyword arguments and Python floats for scalars
assert np.isclose(T.energy(x=x, k=1.3).numpy(), physics.energy(x.numpy(), 1.3))
print("ok")
""", physics)
    assert out.strip() == "ok"


def test_tf_float32_function_and_persistent_tape(physics):
    out = run_tf("""
import numpy as np
import tensorflow as tf
import physics
T = physics.tf

# float32 follows the C type float
x32 = tf.Variable(np.linspace(-1, 1, 5).astype(np.float32))
with tf.GradientTape() as tape:
    e = T.energyf(x32, 2.0)
g = tape.gradient(e, x32)
assert e.dtype == tf.float32 and g.dtype == tf.float32
assert np.allclose(g.numpy(), 4.0 * x32.numpy() + np.cos(x32.numpy()), rtol=1e-5)

# a persistent tape used twice, and for two different targets
x = tf.constant(np.linspace(0.1, 1.2, 7))
k = tf.constant(0.8, tf.float64)
with tf.GradientTape(persistent=True) as tape:
    tape.watch([x, k])
    e = T.energy(x, k)
    r = tf.reduce_sum(T.residual(x) ** 2)
first = tape.gradient(e, [x, k])
second = tape.gradient(e, [x, k])
third = tape.gradient(r, x)
del tape
expected = physics.energy.vjp(x.numpy(), 0.8, cotangents=[1.0])
for a, b in ((first, second), (first, expected)):
    assert np.allclose(a[0], b[0], rtol=1e-12) and np.isclose(float(a[1]), float(b[1]), rtol=1e-12)
assert np.allclose(third.numpy(), physics.residual.vjp(x.numpy(), cotangents=[2 * physics.residual(x.numpy())])[0])

# inside tf.function: the forward pass and the gradient, traced once, called twice
@tf.function
def step(x, k):
    with tf.GradientTape() as tape:
        tape.watch([x, k])
        e = T.energy(x, k) + tf.reduce_sum(T.residual(x) ** 2)
    return e, tape.gradient(e, [x, k])
for _ in range(2):
    e2, (gx, gk) = step(x, k)
    eager = physics.energy(x.numpy(), 0.8) + np.sum(physics.residual(x.numpy()) ** 2)
    assert np.isclose(e2.numpy(), eager, rtol=1e-12)
    assert np.allclose(gx.numpy(), expected[0] + third.numpy(), rtol=1e-12)
    assert np.isclose(gk.numpy(), expected[1], rtol=1e-12)
assert step.experimental_get_tracing_count() == 1

# a tf.function called under an eager tape, with shapes only known at run time
f = tf.function(lambda x, k: T.energy(x, k),
                input_signature=[tf.TensorSpec([None], tf.float64), tf.TensorSpec([], tf.float64)])
for n in (3, 9):
    xn = tf.constant(np.linspace(0, 1, n))
    with tf.GradientTape() as tape:
        tape.watch(xn)
        en = f(xn, k)
    assert np.allclose(tape.gradient(en, xn).numpy(), physics.energy.vjp(xn.numpy(), 0.8, cotangents=[1.0])[0])

# an optimizer step on a Variable
v = tf.Variable(np.linspace(0.1, 1.2, 7))
before = T.energy(v, 0.8).numpy()
for _ in range(20):
    with tf.GradientTape() as tape:
        loss = T.energy(v, 0.8)
    v.assign_sub(0.01 * tape.gradient(loss, v))
assert T.energy(v, 0.8).numpy() < before

print("ok")
""", physics)
    assert out.strip() == "ok"


def test_tf_second_derivatives_and_forward_mode(physics):
    out = run_tf("""
import numpy as np
import tensorflow as tf
import physics
T = physics.tf
rng = np.random.default_rng(1)
x = tf.constant(rng.random(6))
k = tf.constant(1.3, tf.float64)
w = tf.constant(rng.random(6))

# Hessian-vector products through nested tapes (forward over reverse), eager and in tf.function
def second(x, k):
    with tf.GradientTape() as outer:
        outer.watch([x, k])
        with tf.GradientTape() as inner:
            inner.watch([x, k])
            e = T.energy(x, k) + tf.reduce_sum(w * T.damp(x, k))
        gx, gk = inner.gradient(e, [x, k])
        s = tf.reduce_sum(w * gx) + gk
    return outer.gradient(s, [x, k])

def s_np(xv, kv):  # the same from the NumPy layer's vjp, for finite differences
    a = physics.energy.vjp(xv, kv, cotangents=[1.0])
    b = physics.damp.vjp(xv, kv, cotangents=[w.numpy()])
    return np.sum(w.numpy() * (a[0] + b[0])) + a[1] + b[1]
eps, x0 = 1e-6, x.numpy()
fdx = np.array([(s_np(x0 + eps * e, 1.3) - s_np(x0 - eps * e, 1.3)) / (2 * eps) for e in np.eye(6)])
fdk = (s_np(x0, 1.3 + eps) - s_np(x0, 1.3 - eps)) / (2 * eps)
for hx, hk in (second(x, k), tf.function(second)(x, k)):
    assert np.allclose(hx.numpy(), fdx, rtol=1e-6, atol=1e-7), (hx, fdx)
    assert np.isclose(hk.numpy(), fdk, rtol=1e-6, atol=1e-7), (hk, fdk)

# forward mode: tf.autodiff.ForwardAccumulator gets the tangents of the outputs
with tf.autodiff.ForwardAccumulator([x, k], [w, tf.constant(0.5, tf.float64)]) as acc:
    e = T.energy(x, k)
    r = T.residual(x)
assert np.isclose(acc.jvp(e).numpy(), physics.energy.jvp(x0, 1.3, tangents=[w.numpy(), 0.5])[1][0])
assert np.allclose(acc.jvp(r).numpy(), physics.residual.jvp(x0, tangents=[w.numpy()])[1][0])

# a third order raises instead of being silently zero
with tf.GradientTape() as t3:
    t3.watch(x)
    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t1:
            t1.watch(x)
            e = T.energy(x, 1.0)
        g = tf.reduce_sum(t1.gradient(e, x))
    h = tf.reduce_sum(t2.gradient(g, x))
try:
    t3.gradient(h, x)
except NotImplementedError as err:
    assert "differentiable twice at most" in str(err)
else:
    raise AssertionError("third order did not raise")
print("ok")
""", physics)
    assert out.strip() == "ok"


def test_tf_bad_tensors_raise(physics):
    out = run_tf("""
import numpy as np
import tensorflow as tf
import physics
T = physics.tf
x = tf.constant(np.linspace(0, 1, 6))
idx = tf.zeros(3, tf.int32)
cases = {
    "float32 for double": lambda: T.energy(tf.cast(x, tf.float32), 1.0),
    "float64 for float": lambda: T.energyf(x, 1.0),
    "numpy float32": lambda: T.energy(np.zeros(6, np.float32), 1.0),
    "int64 index": lambda: T.gather(tf.zeros(12, tf.float64), 4, tf.zeros(3, tf.int64), 1.0),
    "wrong size": lambda: T.gather(tf.zeros(11, tf.float64), 4, idx, 1.0),
    "vector scalar": lambda: T.energy(x, tf.constant([1.0, 2.0], tf.float64)),
    "tensor int": lambda: T.gather(tf.zeros(12, tf.float64), tf.constant(4), idx, 1.0),
    "string": lambda: T.energy("x", 1.0),
    "missing": lambda: T.energy(x),
    "extra": lambda: T.energy(x, 1.0, 2.0),
    "in tf.function": lambda: tf.function(lambda a: T.energy(a, 1.0))(tf.cast(x, tf.float32)),
}
for what, call in cases.items():
    try:
        call()
    except (TypeError, ValueError) as err:
        print(what, "->", type(err).__name__, err)
    else:
        raise AssertionError(what)
# a size known only when the graph runs: the check runs inside the graph, still an exception
g = tf.function(lambda A: T.gather(A, 4, idx, 1.0), input_signature=[tf.TensorSpec([None], tf.float64)])
try:
    g(tf.zeros(11, tf.float64))
except tf.errors.InvalidArgumentError as err:
    assert "A has 11 element(s), expected m*n = 12" in str(err)
else:
    raise AssertionError("run-time size")
assert np.isclose(g(tf.ones(12, tf.float64)).numpy(), physics.gather(np.ones(12), 4, np.zeros(3, np.int32), 1.0))
print("ok")
""", physics)
    assert out.strip().endswith("ok")
    assert "must have dtype float64 (C type const double *), got float32" in out
    assert "A has 11 element(s), expected m*n = 12" in out


def test_tf_many_calls_do_not_grow_memory(physics):
    out = run_tf("""
import gc, resource
import numpy as np
import tensorflow as tf
import physics
T = physics.tf
x = tf.constant(np.linspace(0, 1, 2000))

def eager_step(i):
    with tf.GradientTape(persistent=i % 2 == 0) as tape:
        tape.watch(x)
        loss = T.energy(T.residual(x), 1.0)
    if i % 3:
        tape.gradient(loss, x)   # the other tapes are dropped without a gradient

@tf.function
def graph_step(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = T.energy(T.residual(x), 1.0)
    return tape.gradient(loss, x)

def rounds(count):
    for i in range(count):
        eager_step(i)
        graph_step(x)

rounds(300)
gc.collect()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
rounds(3000)
gc.collect()
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
assert graph_step.experimental_get_tracing_count() == 1
print(grown)
""", physics)
    assert int(out.strip()) < 16384, out


def test_tf_missing_gives_install_hint(physics, tmp_path):
    # a `tensorflow` that cannot be imported, first on the path: the package still imports
    # and works, and only NAME.tf explains how to install TensorFlow
    blocker = tmp_path / "block"
    blocker.mkdir()
    (blocker / "tensorflow.py").write_text("raise ImportError('No module named tensorflow')\n")
    out = run_script(f"""
import sys
sys.path.insert(0, {str(blocker)!r})
import numpy as np
import physics
assert physics.energy(np.ones(3), 1.0) > 0
try:
    physics.tf
except ImportError as err:
    assert "pip install tensorflow-cpu" in str(err), err
    print("ok:", err)
else:
    raise AssertionError("physics.tf imported")
""", physics)
    assert out.startswith("ok:")
