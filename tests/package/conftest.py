"""Fixtures for tests/package: one package built once per session through the real command."""
from __future__ import annotations

import os

import pytest

from package_helpers import PHYSICS_EXPORTS, PROGRAMS, build


@pytest.fixture(scope="session")
def physics(tmp_path_factory):
    """The package `physics` built from programs/physics.c (its directory)."""
    work = tmp_path_factory.mktemp("physics")
    return build([os.path.join(PROGRAMS, "physics.c")], "physics", work / "pkg", PHYSICS_EXPORTS)
