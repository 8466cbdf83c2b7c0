"""`enzyme-build config`: what other tools need to know (pkg-config style), and the CMake package.

    enzyme-build config --cflags         -I<dir of enzyme/enzyme.h>
    enzyme-build config --include-dir    that directory
    enzyme-build config --cmake-dir      directory of EnzymeBuildConfig.cmake (written on demand)
    enzyme-build config --toolchain      the CMake toolchain file
"""
from __future__ import annotations

import os
import shlex
import sys

import click

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INCLUDE_DIR = os.path.join(PACKAGE_DIR, "include")
TEMPLATES = os.path.join(PACKAGE_DIR, "cmake")
CMAKE_FILES = ("EnzymeBuildConfig.cmake", "EnzymeBuildConfigVersion.cmake",
               "EnzymeBuildToolchain.cmake")


def executables() -> dict[str, str]:
    """The entry points of this installation (next to the running Python, else on PATH)."""
    import shutil
    bindir = os.path.dirname(os.path.abspath(sys.executable))
    found = {}
    for name in ("enzyme-build", "enzyme-cc", "enzyme-c++"):
        path = os.path.join(bindir, name)
        found[name] = path if os.access(path, os.X_OK) else (shutil.which(name) or path)
    return found


def cmake_dir() -> str:
    """<prefix>/share/cmake/EnzymeBuild, where find_package() looks when <prefix>/bin is on
    PATH; the files are (re)written here when missing or stale. Falls back to the user's
    cache directory when the prefix is read-only."""
    from .. import __version__
    from ..files import replace_atomically
    exe = executables()
    values = {"@VERSION@": __version__, "@EXECUTABLE@": exe["enzyme-build"],
              "@CC@": exe["enzyme-cc"], "@CXX@": exe["enzyme-c++"], "@INCLUDE_DIR@": INCLUDE_DIR}
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    for directory in (os.path.join(sys.prefix, "share", "cmake", "EnzymeBuild"),
                      os.path.join(cache, "enzyme-build", "cmake")):
        try:
            os.makedirs(directory, exist_ok=True)
            for name in CMAKE_FILES:
                with open(os.path.join(TEMPLATES, name + ".in"), encoding="utf-8") as handle:
                    text = handle.read()
                for key, value in values.items():
                    text = text.replace(key, value.replace("\\", "/"))
                target = os.path.join(directory, name)
                if not os.path.isfile(target) or open(target, encoding="utf-8").read() != text:
                    replace_atomically(target, text, mode=0o644)
            return directory
        except OSError:
            continue
    from ..errors import EnzymeBuildError
    raise EnzymeBuildError("cannot write the CMake package files",
                           hint=f"make {sys.prefix}/share or ~/.cache writable")


@click.command("config")
@click.option("--cflags", "what", flag_value="cflags", help="Compiler flags for <enzyme/enzyme.h>.")
@click.option("--include-dir", "what", flag_value="include-dir", help="Directory of enzyme/enzyme.h.")
@click.option("--cmake-dir", "what", flag_value="cmake-dir",
              help="Directory of EnzymeBuildConfig.cmake (for -DEnzymeBuild_DIR=…).")
@click.option("--toolchain", "what", flag_value="toolchain", help="The CMake toolchain file.")
def config(what):
    """Print what build tools need: flags, include directory, CMake package."""
    from ..errors import run_guarded
    if what is None:
        raise click.UsageError("say what to print: --cflags, --include-dir, --cmake-dir or --toolchain")

    def show() -> int:
        if what == "cflags":
            print(shlex.join([f"-I{INCLUDE_DIR}"]))
        elif what == "include-dir":
            print(INCLUDE_DIR)
        elif what == "cmake-dir":
            print(cmake_dir())
        else:
            print(os.path.join(cmake_dir(), "EnzymeBuildToolchain.cmake"))
        return 0
    code = run_guarded(show)
    if code:
        sys.exit(code)
