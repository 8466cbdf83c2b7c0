"""Helpers for the forward-mode tests: the AD tests' build-through-the-stage pipeline, with
this directory's programs on the include path."""
from __future__ import annotations

import functools
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "programs")
sys.path.insert(0, os.path.join(HERE, "..", "ad"))
import ad_helpers  # noqa: E402
from ad_helpers import enzyme_build_cli  # noqa: E402,F401

frontend_ir = functools.partial(ad_helpers.frontend_ir, include=(PROGRAMS,))
build_with_stage = functools.partial(ad_helpers.build_with_stage, include=(PROGRAMS,))
