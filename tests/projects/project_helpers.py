"""Helpers for the real-project tests: running build tools, finding LLVM tools, reading ELF sections."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN_DIR = os.path.dirname(sys.executable)
LLVM_MAJOR = 22


def in_ci() -> bool:
    """CI must run every project test; a missing input there is a failure, not a skip."""
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def run(cmd, *, cwd=None, env=None, timeout=600, check=True, input=None):
    """Run a command, returning the CompletedProcess; on failure show what it printed."""
    proc = subprocess.run(cmd, cwd=cwd, env=env, timeout=timeout, input=input,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          shell=isinstance(cmd, str))
    if check and proc.returncode != 0:
        pytest.fail(f"command failed with exit {proc.returncode}: {cmd}\n{proc.stdout[-6000:]}",
                    pytrace=False)
    return proc


def tool(name: str) -> str:
    """An LLVM tool of the matching major version (readelf, objcopy, …)."""
    for candidate in (f"{name}-{LLVM_MAJOR}", f"/usr/lib/llvm-{LLVM_MAJOR}/bin/{name}"):
        found = shutil.which(candidate)
        if found:
            return found
    pytest.skip(f"{name}-{LLVM_MAJOR} not found")


def has_section(obj_path: str, section: str) -> bool:
    """True when the ELF object has the named section."""
    out = run([tool("llvm-readelf"), "-S", "-W", obj_path]).stdout
    return re.search(rf"\]\s+{re.escape(section)}\s", out) is not None


def is_fat_object(obj_path: str) -> bool:
    """True when the object carries the embedded bitcode the link step reads."""
    try:
        from enzyme_build.link.objfile import BITCODE_SECTION
    except ImportError:
        BITCODE_SECTION = ".llvmbc"
    return has_section(obj_path, BITCODE_SECTION)
