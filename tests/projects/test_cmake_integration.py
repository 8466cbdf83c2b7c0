"""CMake projects built through enzyme-build, every documented way, with real cmake:
the toolchain file, find_package(EnzymeBuild) + enzyme_build_target(), and the compiler and
linker launchers. A shared library whose link skips enzyme-build fails to link."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

BIN_DIR = os.path.dirname(sys.executable)
ENZYME_BUILD = os.path.join(BIN_DIR, "enzyme-build")
ENZYME_CC = os.path.join(BIN_DIR, "enzyme-cc")

pytestmark = pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is installed by ./bootstrap")

FILES = {
    "model.c": """\
        #include <enzyme/enzyme.h>
        double energy(double x, double k) { return k * x * x * x; }
        /* d energy / dx, synthesized at the library's link */
        double denergy(double x, double k) {
            return __enzyme_autodiff((void *)energy, x, enzyme_const, k);
        }
    """,
    "main.c": """\
        #include <stdio.h>
        double denergy(double x, double k);
        int main(void) { printf("%g\\n", denergy(2.0, 0.5)); return 0; }   /* 1.5 x^2 = 6 */
    """,
}
CMAKELISTS = """\
cmake_minimum_required(VERSION 3.21)
project(demo C)
set(CMAKE_EXPORT_COMPILE_COMMANDS ON)
{find}
add_library(model SHARED model.c)
add_executable(app main.c)
target_link_libraries(app PRIVATE model)
{mark}
"""


def project(tmp_path, find: str = "", mark: str = ""):
    import textwrap
    for name, text in FILES.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    (tmp_path / "CMakeLists.txt").write_text(CMAKELISTS.format(find=find, mark=mark))
    return tmp_path


def configure_and_build(source, *options, env=None):
    build = source / "build"
    env = dict(os.environ if env is None else env)
    env["PATH"] = BIN_DIR + os.pathsep + env.get("PATH", "")
    done = subprocess.run(["cmake", "-S", str(source), "-B", str(build), *options], env=env,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout + done.stderr
    return subprocess.run(["cmake", "--build", str(build), "-j2"], env=env, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL), build


def app_output(build) -> str:
    return subprocess.run([str(build / "app")], capture_output=True, text=True).stdout


def include_dir() -> str:
    return subprocess.run([ENZYME_BUILD, "config", "--include-dir"], capture_output=True,
                          text=True, check=True).stdout.strip()


def test_toolchain_file(tmp_path):
    toolchain = subprocess.run([ENZYME_BUILD, "config", "--toolchain"], capture_output=True,
                               text=True, check=True).stdout.strip()
    built, build = configure_and_build(project(tmp_path), f"-DCMAKE_TOOLCHAIN_FILE={toolchain}")
    assert built.returncode == 0, built.stdout + built.stderr
    assert app_output(build) == "6\n"
    commands = json.loads((build / "compile_commands.json").read_text())
    assert all(include_dir() in entry["command"] for entry in commands)


def test_find_package_and_mark_targets(tmp_path):
    """find_package finds the package through PATH (the venv's bin → its share/cmake)."""
    subprocess.run([ENZYME_BUILD, "config", "--cmake-dir"], check=True, capture_output=True)
    source = project(tmp_path, find="find_package(EnzymeBuild 0.1 REQUIRED)",
                     mark="enzyme_build_target(model app)")
    built, build = configure_and_build(source, "-DCMAKE_C_COMPILER=clang-22")
    assert built.returncode == 0, built.stdout + built.stderr
    assert app_output(build) == "6\n"
    commands = json.loads((build / "compile_commands.json").read_text())
    assert any(include_dir() in entry["command"] for entry in commands)


def test_compiler_and_linker_launchers(tmp_path):
    built, build = configure_and_build(project(tmp_path), "-DCMAKE_C_COMPILER=clang-22",
                                       f"-DCMAKE_C_COMPILER_LAUNCHER={ENZYME_CC}",
                                       f"-DCMAKE_C_LINKER_LAUNCHER={ENZYME_CC}",
                                       f"-DCMAKE_C_FLAGS=-I{include_dir()}")
    assert built.returncode == 0, built.stdout + built.stderr
    assert app_output(build) == "6\n"


def test_compiler_launcher_alone_cannot_make_a_broken_library(tmp_path):
    """Compiled by enzyme-build, linked by plain clang: the shared library must not link."""
    built, build = configure_and_build(project(tmp_path), "-DCMAKE_C_COMPILER=clang-22",
                                       f"-DCMAKE_C_COMPILER_LAUNCHER={ENZYME_CC}",
                                       f"-DCMAKE_C_FLAGS=-I{include_dir()}")
    assert built.returncode != 0
    assert "__enzyme_build_link_step_required__link_with_enzyme_cc" in built.stdout + built.stderr
    assert not list(build.glob("libmodel.so*"))
