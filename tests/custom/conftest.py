"""Fixtures of the custom-rule tests (helpers live in custom_helpers.py)."""
from __future__ import annotations

import pytest


@pytest.fixture
def work(tmp_path):
    """A scratch directory for one test's sources and objects."""
    return tmp_path
