"""Fit the stiffnesses and the damping of a C spring chain to an observed trajectory with a
PyTorch optimizer: gradients come from derivatives enzyme-build synthesized for spring.c."""
from __future__ import annotations

import numpy as np
import torch

from common import DT, N, STEPS, observations, spring_module

spring = spring_module()
true_k, true_c, x0, observed = observations(spring)

k = torch.ones(N, dtype=torch.float64, requires_grad=True)
c = torch.tensor(0.1, dtype=torch.float64, requires_grad=True)
x0_t, target = torch.from_numpy(x0), torch.from_numpy(observed)
optimizer = torch.optim.Adam([k, c], lr=0.05)
for step in range(301):
    optimizer.zero_grad()
    trajectory = spring.torch.simulate(k, c, x0_t, STEPS, DT)
    loss = torch.mean((trajectory - target) ** 2)
    loss.backward()
    optimizer.step()
    if step % 50 == 0:
        print(f"step {step:3d}  loss {loss.item():.3e}")
print(f"damping: fitted {c.item():.4f}, true {true_c:.4f}")
print(f"stiffness error: {np.abs(k.detach().numpy() - true_k).max():.2e}")
