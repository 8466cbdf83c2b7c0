"""Helpers for the security tests: running enzyme-build as a user would, and spotting side effects."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

BIN_DIR = os.path.dirname(sys.executable)
ENZYME_BUILD = os.path.join(BIN_DIR, "enzyme-build")
ENZYME_CC = os.path.join(BIN_DIR, "enzyme-cc")

# What an injected command would leave behind: every hostile name below tries to create
# a file whose name starts with this.
PWNED = "PWNED"


def write(directory, name: str, text: str) -> str:
    path = os.path.join(str(directory), name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(textwrap.dedent(text))
    return path


def run(command, cwd, env=None, timeout=300, stdin=subprocess.DEVNULL) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=str(cwd), env=env, capture_output=True, text=True,
                          errors="replace", timeout=timeout, stdin=stdin)


def pwned_files(*directories) -> list[str]:
    """Files an injected command created (anywhere under the given directories)."""
    found = []
    for directory in directories:
        for root, _dirs, files in os.walk(str(directory)):
            found += [os.path.join(root, f) for f in files if f.startswith(PWNED)]
    return found


def no_traceback(result: subprocess.CompletedProcess) -> None:
    text = result.stdout + result.stderr
    assert "Traceback" not in text and "internal error" not in text, text
