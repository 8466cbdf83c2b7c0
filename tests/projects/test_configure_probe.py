"""An autoconf-style probe (tests/projects/configure_probe.sh) against enzyme-build's C compilers."""
from __future__ import annotations

import os
import shutil

import pytest

from project_helpers import BIN_DIR, LLVM_MAJOR, run

PROBE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "configure_probe.sh")

COMPILERS = {
    # plain clang validates the probe itself: if this fails, the probe is wrong
    "clang": (f"clang-{LLVM_MAJOR}", {}),
    "enzyme-build cc": (f"{os.path.join(BIN_DIR, 'enzyme-build')} cc", {}),
    "enzyme-cc": (os.path.join(BIN_DIR, "enzyme-cc"), {}),
    "configure-only": (f"{os.path.join(BIN_DIR, 'enzyme-build')} cc",
                       {"ENZYME_BUILD_CONFIGURE_ONLY": "1"}),
}


@pytest.mark.parametrize("name", list(COMPILERS))
def test_configure_probe(name, tmp_path):
    compiler, extra_env = COMPILERS[name]
    if name == "clang" and not shutil.which(compiler):
        pytest.skip(f"{compiler} not on PATH")
    env = dict(os.environ, CC=compiler, **extra_env)
    proc = run(["bash", PROBE], cwd=tmp_path, env=env, timeout=300, check=False)
    log = (tmp_path / "config.log").read_text(errors="replace") if (tmp_path / "config.log").exists() else ""
    assert proc.returncode == 0, f"{proc.stdout}\n--- config.log ---\n{log[-6000:]}"
    assert "all checks passed" in proc.stdout
