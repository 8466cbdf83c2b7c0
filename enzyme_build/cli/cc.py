"""Console scripts `enzyme-cc` / `enzyme-c++` and the `cc`/`c++` subcommands of enzyme-build.

Kept free of click and rich: a `-c` compile must start as fast as python allows.
"""
from __future__ import annotations

import sys

from ..errors import run_guarded


def run_cc(argv: list[str], *, cxx: bool) -> int:
    from ..frontend import driver
    return run_guarded(driver.run, argv, cxx=cxx)


def main_cc() -> None:
    sys.exit(run_cc(sys.argv[1:], cxx=False))


def main_cxx() -> None:
    sys.exit(run_cc(sys.argv[1:], cxx=True))
