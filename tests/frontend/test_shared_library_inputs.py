"""Functions the differentiated code calls in a linked shared library.

A library built by enzyme-build carries its bitcode: the derivative is synthesized from it,
while calls and data still bind to the library at run time (its exported state is the one
the program sees). A library without bitcode, or one whose code keeps private mutable
state, is an error naming the library and the static-archive fix.
"""
from __future__ import annotations

import os
import shutil
import subprocess


from test_failure_handling import ENZYME_BUILD

LIB = "double scale(double x) { return 3.0 * x; }\n"
USE = """\
#include <stdio.h>
#include <enzyme/enzyme.h>
double scale(double x);
double f(double x) { return x * scale(x); }
int main(void) { printf("%g\\n", __enzyme_autodiff((void *)f, 2.0)); return 0; }
"""
# exported state: the program sets the library's gain, the derivative must see it
LIB_WITH_STATE = """\
double gain = 3.0;
void set_gain(double g) { gain = g; }
static double twice(double v) { return 2.0 * v; }
double scale(double x) { return gain * twice(x) / 2.0; }
"""
USE_WITH_STATE = """\
#include <stdio.h>
#include <enzyme/enzyme.h>
double scale(double x);
void set_gain(double g);
double f(double x) { return x * scale(x); }
int main(void) { set_gain(5.0); printf("%g\\n", __enzyme_autodiff((void *)f, 2.0)); return 0; }
"""
LIB_WITH_PRIVATE_STATE = """\
static int calls;
int scale_calls(void) { return calls; }
double scale(double x) { calls++; return 3.0 * x; }
"""


def cc(args, cwd, env=None):
    return subprocess.run([ENZYME_BUILD, "cc", *args], cwd=cwd, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, env=env)


def run_prog(directory):
    env = dict(os.environ, LD_LIBRARY_PATH=str(directory))
    return subprocess.run([str(directory / "prog")], capture_output=True, text=True, env=env).stdout


def shared_library(directory, source: str, built_by: str) -> None:
    (directory / "lib.c").write_text(source)
    if built_by == "enzyme-build":
        done = cc(["-O2", "-shared", "-fPIC", "lib.c", "-o", "libscale.so"], directory)
        assert done.returncode == 0, done.stderr
    else:
        subprocess.run([shutil.which("clang-22"), "-O2", "-shared", "-fPIC", "lib.c", "-o",
                        "libscale.so"], cwd=directory, check=True)


def test_library_built_by_enzyme_build_gives_its_bitcode(tmp_path):
    shared_library(tmp_path, LIB, "enzyme-build")
    (tmp_path / "use.c").write_text(USE)
    done = cc(["-O2", "use.c", "-L.", "-lscale", "-o", "prog"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert run_prog(tmp_path) == "12\n"
    readelf = shutil.which("llvm-readelf-22") or "readelf"
    dynamic = subprocess.run([readelf, "-d", str(tmp_path / "prog")], capture_output=True, text=True).stdout
    assert "libscale.so" in dynamic  # still linked against the library


def test_exported_state_is_the_librarys_own(tmp_path):
    """set_gain() runs in the library; the derivative reads the same `gain` (d/dx 5x^2 = 20)."""
    shared_library(tmp_path, LIB_WITH_STATE, "enzyme-build")
    (tmp_path / "use.c").write_text(USE_WITH_STATE)
    done = cc(["-O2", "use.c", "-L.", "-lscale", "-o", "prog"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert run_prog(tmp_path) == "20\n"


def test_private_mutable_state_is_refused(tmp_path):
    shared_library(tmp_path, LIB_WITH_PRIVATE_STATE, "enzyme-build")
    (tmp_path / "use.c").write_text(USE)
    done = cc(["-O2", "use.c", "-L.", "-lscale", "-o", "prog"], tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "libscale.so" in done.stderr and "mutable state" in done.stderr, done.stderr
    assert "static archive" in done.stderr


def test_library_without_bitcode_is_named_with_the_fix(tmp_path):
    shared_library(tmp_path, LIB, "clang")
    (tmp_path / "use.c").write_text(USE)
    done = cc(["-O2", "use.c", "-L.", "-lscale", "-o", "prog"], tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "shared library ./libscale.so, which has no embedded bitcode" in done.stderr, done.stderr
    assert "-l:libscale.a" in done.stderr and not os.path.exists(tmp_path / "prog")
    # the fix the message gives works
    assert cc(["-O2", "-c", "-fPIC", "lib.c", "-o", "lib.o"], tmp_path).returncode == 0
    subprocess.run(["ar", "rcs", "libscale.a", "lib.o"], cwd=tmp_path, check=True)
    done = cc(["-O2", "use.c", "-L.", "-l:libscale.a", "-o", "prog"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert run_prog(tmp_path) == "12\n"
