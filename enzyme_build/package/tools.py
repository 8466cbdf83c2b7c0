"""Running the compilers a package build needs: argument lists (never a shell), output captured."""
from __future__ import annotations

import os
import shlex
import subprocess
import sys


def run_tool(argv: list[str]) -> subprocess.CompletedProcess:
    """Run a build step, its output captured; ENZYME_BUILD_VERBOSE=1 shows the command and output."""
    verbose = bool(os.environ.get("ENZYME_BUILD_VERBOSE"))
    if verbose:
        print("enzyme-build package: " + " ".join(shlex.quote(a) for a in argv), file=sys.stderr)
    proc = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if verbose and proc.stderr:  # stdout is data (clang's AST), not for the reader
        print(proc.stderr.rstrip(), file=sys.stderr)
    return proc
