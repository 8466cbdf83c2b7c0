"""PyTorch implementations of the peer gradients (eager, float64, one thread)."""
from __future__ import annotations

import torch

import problems

torch.set_num_threads(1)
try:
    torch.set_num_interop_threads(1)
except RuntimeError:  # already set (interop threads can be fixed only once)
    pass
torch.set_default_dtype(torch.float64)
NAME, VERSION = "PyTorch", torch.__version__


def gmm_gradient_fn(d: int, k: int, n: int):
    rows, cols = (torch.as_tensor(a) for a in problems.lower_indices(d))
    constant = problems.gmm_constants(d, k, n, 1.0, 0)

    def gradient(data):
        alphas, means, icf = (data[name].detach().requires_grad_() for name in ("alphas", "means", "icf"))
        x = data["x"]
        qdiag = torch.exp(icf[:, :d])
        sum_qs = icf[:, :d].sum(dim=1)
        q = torch.zeros(k, d, d)
        q[:, rows, cols] = icf[:, d:]
        q = q + torch.diag_embed(qdiag)
        xc = x[:, None, :] - means[None, :, :]
        qx = torch.einsum("kij,nkj->nki", q, xc)
        main = alphas[None, :] + sum_qs[None, :] - 0.5 * (qx * qx).sum(dim=-1)
        prior = 0.5 * ((qdiag * qdiag).sum() + (icf[:, d:] ** 2).sum())
        err = constant + torch.logsumexp(main, dim=1).sum() - n * torch.logsumexp(alphas, dim=0) + prior
        return torch.autograd.grad(err, (alphas, means, icf))
    return gradient


def norm_gradient_fn(n: int):
    def gradient(data):
        x = data["x"].detach().requires_grad_()
        out = torch.dot(data["w"], x / torch.sqrt((x * x).sum()))
        return torch.autograd.grad(out, (x,))
    return gradient


def nbody_gradient_fn(bodies: int, steps: int):
    eps2 = problems.NBODY_SOFTENING2
    upper = torch.triu(torch.ones(bodies, bodies), diagonal=1)

    def gradient(data):
        pos0, vel0 = (data[name].detach().requires_grad_() for name in ("pos", "vel"))
        mass, dt = data["mass"], data["dt"]
        p, v = pos0, vel0
        for _ in range(steps):
            diff = p[None, :, :] - p[:, None, :]
            r2 = (diff * diff).sum(dim=-1) + eps2
            acc = ((mass[None, :] / (r2 * torch.sqrt(r2)))[:, :, None] * diff).sum(dim=1)
            v = v + dt * acc
            p = p + dt * v
        diff = p[None, :, :] - p[:, None, :]
        inv = 1 / torch.sqrt((diff * diff).sum(dim=-1) + eps2)
        energy = 0.5 * (mass * (v * v).sum(dim=1)).sum() - (upper * mass[:, None] * mass[None, :] * inv).sum()
        return torch.autograd.grad(energy, (pos0, vel0))
    return gradient


def gradient_fn(problem, sizes: dict):
    make = {"gmm": gmm_gradient_fn, "norm": norm_gradient_fn, "nbody": nbody_gradient_fn}[problem.kernel]
    return make(**sizes)


def to_device(data: dict) -> dict:
    return {k: (torch.as_tensor(v) if hasattr(v, "shape") else v) for k, v in data.items()}


def block(result) -> None:
    pass  # eager CPU: the result is ready when the call returns
