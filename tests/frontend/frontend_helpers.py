"""Helpers for the front-end tests: run the wrapper, write sources, inspect fat objects.

(Not conftest.py: several test areas have one, and `import conftest` would be ambiguous.)
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

BIN_DIR = os.path.dirname(sys.executable)
ENZYME_BUILD = os.path.join(BIN_DIR, "enzyme-build")


class Workspace:
    """A temporary directory with helpers to write files and run enzyme-build in it."""

    def __init__(self, path):
        self.path = str(path)

    def write(self, name: str, text: str) -> str:
        full = os.path.join(self.path, name)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as fh:
            fh.write(text)
        return full

    def file(self, name: str) -> str:
        return os.path.join(self.path, name)

    def exists(self, name: str) -> bool:
        return os.path.exists(self.file(name))

    def read(self, name: str) -> str:
        with open(self.file(name)) as fh:
            return fh.read()

    def run(self, argv, *, env=None, input=None, check=False):
        full_env = dict(os.environ)
        full_env.pop("ENZYME_BUILD_VERBOSE", None)
        full_env.pop("ENZYME_BUILD_KEEP", None)
        full_env.update(env or {})
        proc = subprocess.run(argv, cwd=self.path, env=full_env, input=input,
                              capture_output=True, text=True, timeout=300)
        if check and proc.returncode != 0:
            pytest.fail(f"{argv} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}",
                        pytrace=False)
        return proc

    def eb(self, *args, env=None, input=None, check=False, cxx=False):
        """`enzyme-build cc ARGS…` (or c++) in this directory."""
        return self.run([ENZYME_BUILD, "c++" if cxx else "cc", *args], env=env, input=input,
                        check=check)

    def exe(self, name: str, *args) -> subprocess.CompletedProcess:
        return self.run([self.file(name), *args], check=True)


def has_bitcode(path: str) -> bool:
    from enzyme_build.link import objfile
    with open(path, "rb") as fh:
        return objfile.embedded_bitcode(fh.read()) is not None
