"""Helpers for the SCons tests: a small multi-file C project, and running scons / enzyme-build."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

BIN_DIR = os.path.dirname(sys.executable)
ENZYME_BUILD = os.path.join(BIN_DIR, "enzyme-build")

# A three-file program whose output depends on every file: main prints poly(2) + scale(3).
PROJECT_FILES = {
    "util.h": """\
        double poly(double x);
        double scale(double x);
    """,
    "main.c": """\
        #include <stdio.h>
        #include "util.h"
        int main(void) { printf("%.6f\\n", poly(2.0) + scale(3.0)); return 0; }
    """,
    "poly.c": """\
        #include "util.h"
        double poly(double x) { return x * x + 1.0; }
    """,
    "scale.c": """\
        #include <math.h>
        #include "util.h"
        double scale(double x) { return sqrt(x) * 2.0; }
    """,
}
PROJECT_SOURCES = ["main.c", "poly.c", "scale.c"]
PROJECT_OUTPUT = 5.0 + 2.0 * 3.0 ** 0.5


def write_files(directory, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = os.path.join(directory, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(textwrap.dedent(text))


def run(command, cwd, env=None, check=True, timeout=300) -> subprocess.CompletedProcess:
    """Run a command, returning its result; on unexpected failure show everything it printed."""
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                            timeout=timeout)
    if check and result.returncode != 0:
        raise AssertionError(f"{command} failed with {result.returncode}\n"
                             f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}")
    return result


def scons_command() -> list[str]:
    """The scons installed in the same venv as enzyme-build."""
    script = os.path.join(BIN_DIR, "scons")
    return [script] if os.path.exists(script) else [sys.executable, "-m", "SCons"]


def enzyme_build(*args) -> list[str]:
    return [ENZYME_BUILD, "build", *args]


def clang() -> str:
    found = shutil.which("clang-22") or shutil.which("cc")
    assert found, "clang-22 is needed to build the plain C consumer programs"
    return found


def bitcode_section_count(path: str) -> int:
    """How many embedded-bitcode sections an object or archive holds (all members)."""
    from enzyme_build.link.objfile import BITCODE_SECTION, CLANG_BITCODE_SECTION

    names = section_names(path).split()
    return sum(name in (BITCODE_SECTION, CLANG_BITCODE_SECTION) for name in names)


def section_names(path: str) -> str:
    """Section headers of an object or every member of an archive (llvm-readelf -S)."""
    readelf = shutil.which("llvm-readelf-22") or shutil.which("llvm-readelf") or "readelf"
    return run([readelf, "-S", path], cwd=os.path.dirname(path) or ".").stdout
