"""Fixtures shared by every test area: where the venv's enzyme-build entry points live."""
from __future__ import annotations

import os
import sys

import pytest

BIN_DIR = os.path.dirname(sys.executable)


@pytest.fixture(scope="session")
def enzyme_build_exe() -> str:
    """Path of the venv's `enzyme-build` (use as `[enzyme_build_exe, "cc", ...]`)."""
    return os.path.join(BIN_DIR, "enzyme-build")


@pytest.fixture(scope="session")
def enzyme_cc_exe() -> str:
    """Path of the venv's `enzyme-cc`, the single-executable C compiler for build systems."""
    return os.path.join(BIN_DIR, "enzyme-cc")


# --- running in parallel (pytest-xdist, `./bootstrap test` passes `-n auto --dist loadgroup`) ---
# Tests are handed to workers one by one, except those that share a costly fixture wider than a
# test (a module's compiled programs, the package built once per session): those go to one
# worker together, so each such fixture is still built once. Fixtures that only return paths
# are cheap to repeat and do not group.
_CHEAP_SHARED_FIXTURES = {"enzyme_build_exe", "enzyme_cc_exe", "enzyme_cc_cmd", "lua_source_dir",
                          "tmp_path_factory", "worker_id", "testrun_uid"}


def _shared_fixture_group(item) -> str | None:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    for name in info.names_closure:
        if name in _CHEAP_SHARED_FIXTURES:
            continue
        for fixturedef in info.name2fixturedefs.get(name, ()):
            if fixturedef.scope == "module":
                return item.nodeid.split("::", 1)[0]
            if fixturedef.scope in ("session", "package"):
                return f"session-{name}"
    return None


# tryfirst: on a worker, xdist's own hook turns these marks into the `@group` suffix its
# scheduler reads; this conftest is registered before xdist's worker plugin, so without it
# this hook would run after xdist's and every group would be split across the workers
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        group = _shared_fixture_group(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
