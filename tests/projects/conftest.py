"""Fixtures for the real-project tests: the CC= value for Makefiles and the cached Lua sources."""
from __future__ import annotations

import os
import sys

import pytest

# the tests import project_helpers by name; make that work under any --import-mode
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from project_helpers import BIN_DIR, REPO, in_ci  # noqa: E402


@pytest.fixture(scope="session")
def enzyme_cc_cmd() -> str:
    """The `CC=` value a Makefile gets: the venv's enzyme-build in cc mode."""
    return f"{os.path.join(BIN_DIR, 'enzyme-build')} cc"


@pytest.fixture(scope="session")
def lua_source_dir() -> str:
    """Pristine Lua 5.4 sources (from Debian's lua5.4 source package, fetched by ./bootstrap)."""
    path = os.environ.get("ENZYME_BUILD_LUA_SRC", os.path.join(REPO, ".cache", "lua5.4", "lua"))
    if os.path.isfile(os.path.join(path, "src", "lua.c")):
        return path
    reason = (f"Lua 5.4 sources not found at {path}; `./bootstrap test` fetches them "
              "with `apt-get source lua5.4` (needs a deb-src entry and network)")
    if in_ci():
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)
