"""examples/pytorch: both fits run as a user runs them and drive the loss down."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "pytorch")


@pytest.mark.parametrize("script", ["fit_torch.py", "fit_jax.py"])
def test_fit_drives_the_loss_down(script, tmp_path):
    proc = subprocess.run([sys.executable, os.path.join(EXAMPLE, script)], capture_output=True, text=True,
                          cwd=tmp_path, stdin=subprocess.DEVNULL, timeout=600,
                          env=dict(os.environ, ENZYME_BUILD_CACHE=str(tmp_path / "cache"),
                                   JAX_PLATFORMS="cpu"))
    assert proc.returncode == 0, proc.stderr
    losses = [float(v) for v in re.findall(r"^step +\d+ +loss (\S+)$", proc.stdout, re.M)]
    assert len(losses) == 7 and losses[-1] < 1e-3 * losses[0], proc.stdout
    assert all(later <= earlier for earlier, later in zip(losses, losses[1:])), proc.stdout
    fitted = float(re.search(r"damping: fitted ([0-9.]+)", proc.stdout).group(1))
    assert abs(fitted - 0.3) < 1e-3
