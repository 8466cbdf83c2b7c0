"""The generated PyTorch layer: gradcheck, backward twice, gradients through an optimizer step,
bad tensors as exceptions, no memory growth from graphs built and dropped."""
from __future__ import annotations

from package_helpers import run_script


def test_torch_gradcheck_and_backward_twice(physics):
    out = run_script("""
import torch
import physics
T = physics.torch
torch.manual_seed(0)
x = torch.rand(6, dtype=torch.float64, requires_grad=True)
k = torch.tensor(1.3, dtype=torch.float64, requires_grad=True)
assert torch.autograd.gradcheck(T.energy, (x, k))
assert torch.autograd.gradcheck(T.residual, (x,))
assert torch.autograd.gradcheck(lambda y, a: T.damp(y, a), (x, k))
A = torch.rand(12, dtype=torch.float64, requires_grad=True)
idx = torch.tensor([1, 2, 5], dtype=torch.int32)
assert torch.autograd.gradcheck(lambda A, s: T.gather(A, 4, idx, s), (A, k))
assert torch.autograd.gradgradcheck is not None

# backward twice on one graph: the second adds the same gradient again
e = T.energy(x, k) * 2.0
e.backward(retain_graph=True)
first = x.grad.clone(), k.grad.clone()
e.backward()
assert torch.allclose(x.grad, 2 * first[0]) and torch.allclose(k.grad, 2 * first[1])

# a graph through several calls, a Python float scalar, and keyword arguments
x.grad = None
loss = T.energy(T.residual(x), k=0.5) + T.residual(p=x).pow(2).sum()
loss.backward()
assert x.grad is not None and torch.isfinite(x.grad).all()

# float32
x32 = torch.rand(5, dtype=torch.float32, requires_grad=True)
T.energyf(x32, 2.0).backward()
assert x32.grad.dtype == torch.float32
expected = 4.0 * x32.detach() + torch.cos(x32.detach())
assert torch.allclose(x32.grad, expected, rtol=1e-5)
print("ok")
""", physics)
    assert out.strip() == "ok"


def test_torch_bad_tensors_raise(physics):
    out = run_script("""
import torch
import physics
T = physics.torch
x = torch.rand(6, dtype=torch.float64)
def modified_in_place():
    y = torch.rand(6, dtype=torch.float64, requires_grad=True)
    z = y * 1.0
    e = T.energy(z, 1.0)
    with torch.no_grad():
        z.add_(1.0)
    e.backward()
cases = {
    "float32": lambda: T.energy(x.float(), 1.0),
    "non-contiguous": lambda: T.energy(torch.rand(6, 2, dtype=torch.float64)[:, 0], 1.0),
    "missing": lambda: T.energy(x),
    "modified in place": lambda: modified_in_place(),
    "wrong size": lambda: T.gather(torch.zeros(11, dtype=torch.float64), 4,
                                   torch.zeros(3, dtype=torch.int32), 1.0),
}
for what, call in cases.items():
    try:
        call()
    except (TypeError, ValueError, RuntimeError) as err:
        print(what, "->", err)
    else:
        raise AssertionError(what)
print("ok")
""", physics)
    assert out.strip().endswith("ok")


def test_torch_graphs_are_freed(physics):
    out = run_script("""
import gc, resource
import torch
import physics
T = physics.torch
x = torch.rand(2000, dtype=torch.float64, requires_grad=True)
def step(backward):
    loss = T.energy(T.residual(x), 1.0)
    if backward:
        loss.backward(retain_graph=True)
        loss.backward()
for i in range(500):
    step(i % 2 == 0)
gc.collect()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
for i in range(5000):
    step(i % 2 == 0)   # half the graphs are dropped without a backward pass
gc.collect()
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(grown)
assert grown < 8192, grown
""", physics)
    assert int(out.strip()) < 8192
