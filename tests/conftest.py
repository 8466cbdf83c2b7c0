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
