"""The suite's parallel runs keep each costly shared fixture to one worker (tests/conftest.py):
run pytest with two workers and `--dist loadgroup`, as `./bootstrap test` does, on a small
tree that uses this suite's conftest, and count how often each shared fixture was built."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

MODULE = '''
import os, pytest

@pytest.fixture(scope="module")
def programs():
    with open(os.environ["SETUPS"], "a") as f:
        f.write("{name} " + os.environ.get("PYTEST_XDIST_WORKER", "main") + "\\n")
    return 1

@pytest.mark.parametrize("i", range(8))
def test_uses_programs(programs, i):
    assert programs == 1
'''

CHEAP = '''
import pytest

@pytest.mark.parametrize("i", range(16))
def test_alone(i):
    assert i >= 0
'''


def test_module_fixtures_are_built_once_with_two_workers(tmp_path):
    pytest.importorskip("xdist")
    tree = tmp_path / "tree"
    tree.mkdir()
    shutil.copy(HERE / "conftest.py", tree / "conftest.py")
    for name in ("alpha", "beta"):
        (tree / f"test_{name}.py").write_text(MODULE.format(name=name))
    (tree / "test_cheap.py").write_text(CHEAP)
    setups = tmp_path / "setups.txt"
    env = dict(os.environ, SETUPS=str(setups))
    env.pop("PYTEST_XDIST_WORKER", None)
    env.pop("PYTEST_ADDOPTS", None)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist", "loadgroup",
                           "-p", "no:cacheprovider", "--rootdir", str(tree), str(tree)],
                          cwd=tree, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "32 passed" in proc.stdout, proc.stdout[-2000:]
    built = setups.read_text().split("\n")
    built = [line for line in built if line]
    # one build per module: a module's tests all ran on the worker that built its fixture
    assert sorted(line.split()[0] for line in built) == ["alpha", "beta"], built
