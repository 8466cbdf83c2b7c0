"""Fixtures of the front-end tests (helpers live in frontend_helpers.py)."""
from __future__ import annotations

import pytest
from frontend_helpers import Workspace


@pytest.fixture
def ws(tmp_path):
    """A scratch directory to write sources in and run enzyme-build from."""
    return Workspace(tmp_path)
