"""Build-and-run helpers for the split-mode conformance programs (hcheck.h style): the
reverse-mode suite's helpers, pointed at this directory's programs."""
from __future__ import annotations

import functools
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reverse"))
from rev_helpers import ENZYME_BUILD, HCHECK, OK_LINE, build_and_run as _build_and_run  # noqa: E402

PROGRAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs")
build_and_run = functools.partial(_build_and_run, programs=PROGRAMS)

__all__ = ["ENZYME_BUILD", "HCHECK", "OK_LINE", "PROGRAMS", "build_and_run"]
