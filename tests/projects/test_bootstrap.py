"""./bootstrap: usage errors, a no-op second setup, and pytest's "no tests" status kept."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from project_helpers import REPO

BOOTSTRAP = os.path.join(REPO, "bootstrap")
STAMP = os.path.join(REPO, ".venv", ".enzyme-build-installed")


def bootstrap(*args, timeout=300):
    return subprocess.run([BOOTSTRAP, *args], cwd=REPO, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=timeout)


def require_set_up():
    """Only where ./bootstrap already set this checkout up: then these runs change nothing."""
    if not (os.path.isfile(STAMP) and sys.prefix == os.path.join(REPO, ".venv")):
        pytest.skip("this checkout was not set up by ./bootstrap (no .venv stamp)")
    if not os.path.isfile(os.path.join(REPO, ".cache", "lua5.4", "lua", "src", "lua.c")):
        pytest.skip("Lua sources not fetched yet; ./bootstrap test would fetch them")


@pytest.mark.parametrize("args", [(), ("no-such-command",)])
def test_usage_error(args):
    proc = bootstrap(*args)
    assert proc.returncode == 2
    assert "usage: ./bootstrap example" in proc.stderr


def test_setup_again_does_nothing():
    require_set_up()
    proc = bootstrap("setup")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "" and proc.stdout == ""


def test_no_collected_tests_is_a_failure():
    require_set_up()
    proc = bootstrap("test", "tests/projects/test_bootstrap.py", "-k", "no_test_has_this_name")
    assert proc.returncode == 5, proc.stdout + proc.stderr
    assert "pytest collected no tests" in proc.stderr
