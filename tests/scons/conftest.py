"""Fixtures for the SCons tests."""
from __future__ import annotations

import pytest

from scons_helpers import PROJECT_FILES, write_files


@pytest.fixture
def project(tmp_path):
    """A fresh copy of the three-file project; returns its directory."""
    write_files(tmp_path, PROJECT_FILES)
    return tmp_path
