"""The generated NumPy layer in a fresh interpreter: values, vjp/jvp against central finite
differences, float32, in-out and index arrays, bad arrays as exceptions, no memory growth."""
from __future__ import annotations

from package_helpers import run_script

FINITE_DIFFERENCES = """
import numpy as np
import physics as P

def fd(f, args, i, h=1e-6):
    # central difference of f's flattened outputs with respect to argument i, per component
    base = np.asarray(args[i], dtype=np.float64)
    columns = []
    for j in range(base.size):
        plus = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        minus = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        if np.ndim(base) == 0:
            plus[i] = args[i] + h; minus[i] = args[i] - h
        else:
            plus[i].reshape(-1)[j] += h; minus[i].reshape(-1)[j] -= h
        columns.append((np.hstack([f(*plus)]) - np.hstack([f(*minus)])) / (2 * h))
    return np.array(columns).T  # outputs x inputs
"""


def test_numpy_values_and_derivatives_match_finite_differences(physics):
    out = run_script(FINITE_DIFFERENCES + """
rng = np.random.default_rng(0)
x = rng.uniform(-1, 2, 7); k = 1.7
e = P.energy(x, k)
assert isinstance(e, float) or e.shape == ()
gx, gk = P.energy.vjp(x, k, cotangents=[1.0])
assert np.allclose(gx, fd(P.energy, [x, k], 0)[0], atol=1e-6)
assert np.isclose(gk, fd(P.energy, [x, k], 1)[0, 0], atol=1e-6)
(value,), (tangent,) = P.energy.jvp(x, k, tangents=[np.ones(7), 0.5])
assert np.isclose(value, e) and np.isclose(tangent, gx.sum() + 0.5 * gk)

r = P.residual(x)
assert r.shape == (7,) and r.dtype == np.float64
J = fd(P.residual, [x], 0)
w = rng.normal(size=7)
(gp,) = P.residual.vjp(x, cotangents=[w])
assert np.allclose(gp, w @ J, atol=1e-6)
(r2,), (t2,) = P.residual.jvp(x, tangents=[w])
assert np.allclose(r2, r) and np.allclose(t2, J @ w, atol=1e-6)

# in-out: the argument is not modified, its new value is returned
y = x.copy(); out = P.damp(y, 0.3)
assert np.array_equal(y, x) and not np.allclose(out, x)
J = fd(P.damp, [x, 0.3], 0); Ja = fd(P.damp, [x, 0.3], 1)
gy, ga = P.damp.vjp(x, 0.3, cotangents=[w])
assert np.allclose(gy, w @ J, atol=1e-6) and np.isclose(ga, w @ Ja[:, 0], atol=1e-6)

# A[m*n] with m inferred from idx[m] and n given
A = rng.normal(size=12); idx = np.array([1, 2, 5], dtype=np.int32)
f = lambda A, s: P.gather(A, 4, idx, s)
gA, gs = P.gather.vjp(A, 4, idx, 2.0, cotangents=[1.0])
assert np.allclose(gA, fd(f, [A, 2.0], 0)[0], atol=1e-6)
assert np.isclose(gs, fd(f, [A, 2.0], 1)[0, 0], atol=1e-6)

# float32 in, float32 out
x32 = x.astype(np.float32)
e32 = P.energyf(x32, 1.5)
assert e32.dtype == np.float32
g32, _ = P.energyf.vjp(x32, 1.5, cotangents=[1.0])
assert g32.dtype == np.float32 and np.allclose(g32, 2 * 1.5 * x32 + np.cos(x32), rtol=1e-5)

# an int result is returned, not differentiated
assert P.count_positive(x) == int((x > 0).sum())
print("ok")
""", physics)
    assert out.strip() == "ok"


def test_numpy_bad_arrays_raise_python_exceptions(physics):
    out = run_script("""
import numpy as np
import physics as P
x = np.linspace(0, 1, 6)
cases = {
    "float32 for double": lambda: P.energy(x.astype(np.float32), 1.0),
    "non-contiguous": lambda: P.energy(x[::2], 1.0),
    "a list": lambda: P.energy([1.0, 2.0], 1.0),
    "missing argument": lambda: P.energy(x),
    "too many": lambda: P.energy(x, 1.0, 2.0),
    "string scalar": lambda: P.energy(x, "a"),
    "array for a scalar": lambda: P.energy(x, x),
    "wrong size": lambda: P.gather(np.zeros(11), 4, np.zeros(3, np.int32), 1.0),
    "int64 index for int": lambda: P.gather(np.zeros(12), 4, np.zeros(3, np.int64), 1.0),
    "float for int": lambda: P.gather(np.zeros(12), 4.0, np.zeros(3, np.int32), 1.0),
    "overflow": lambda: P.gather(np.zeros(12), 2**40, np.zeros(3, np.int32), 1.0),
    "unknown keyword": lambda: P.energy(x, q=1.0),
    "wrong cotangent size": lambda: P.residual.vjp(x, cotangents=[np.ones(5)]),
}
for what, call in cases.items():
    try:
        call()
    except (TypeError, ValueError, OverflowError) as err:
        assert str(err).startswith(("energy:", "gather:", "residual:")), (what, err)
        print(what, "->", type(err).__name__, err)
    else:
        raise AssertionError(f"{what}: no exception")
print("ok")
""", physics)
    assert out.strip().endswith("ok")
    assert "must have dtype float64 (C type const double *), got float32" in out
    assert "x has 11 element(s), expected m*n" not in out  # A is the array named in gather
    assert "A has 11 element(s), expected m*n = 12" in out


def test_numpy_many_calls_do_not_grow_memory(physics):
    out = run_script("""
import resource
import numpy as np
import physics as P
x = np.linspace(0, 1, 1000)
def rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
for _ in range(2000):
    P.energy(x, 1.0); P.energy.vjp(x, 1.0, cotangents=[1.0]); P.residual.jvp(x, tangents=[x])
before = rss()
for _ in range(20000):
    P.energy(x, 1.0); P.energy.vjp(x, 1.0, cotangents=[1.0]); P.residual.jvp(x, tangents=[x])
grown = rss() - before
print(grown)
assert grown < 4096, f"max RSS grew by {grown} KiB over 20000 calls"
""", physics)
    assert int(out.strip()) < 4096


def test_numpy_calls_from_threads(physics):
    out = run_script("""
import threading
import numpy as np
import physics as P
rng = np.random.default_rng(4)
inputs = [rng.normal(size=200) for _ in range(8)]
expected = [(P.energy(x, 1.5), P.energy.vjp(x, 1.5, cotangents=[1.0])[0]) for x in inputs]
failures = []
def work(index):
    x = inputs[index]
    for _ in range(300):
        value, (gradient, _) = P.energy(x, 1.5), P.energy.vjp(x, 1.5, cotangents=[1.0])
        if value != expected[index][0] or not np.array_equal(gradient, expected[index][1]):
            failures.append(index)
threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
for t in threads: t.start()
for t in threads: t.join()
print("ok" if not failures else failures)
""", physics)
    assert out.strip() == "ok"
