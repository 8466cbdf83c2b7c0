"""A function the differentiated code calls in a linked shared library: the message names
the library, says whether it carries bitcode, and gives the fix that works (its archive)."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from test_failure_handling import ENZYME_BUILD

LIB = "double scale(double x) { return 3.0 * x; }\n"
USE = """\
#include <stdio.h>
#include <enzyme/enzyme.h>
double scale(double x);
double f(double x) { return x * scale(x); }
int main(void) { printf("%g\\n", __enzyme_autodiff((void *)f, 2.0)); return 0; }
"""


def cc(args, cwd):
    return subprocess.run([ENZYME_BUILD, "cc", *args], cwd=cwd, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("built_by", ["enzyme-build", "clang"])
def test_function_in_a_shared_library(tmp_path, built_by):
    (tmp_path / "lib.c").write_text(LIB)
    (tmp_path / "use.c").write_text(USE)
    if built_by == "enzyme-build":
        assert cc(["-O2", "-shared", "-fPIC", "lib.c", "-o", "libscale.so"], tmp_path).returncode == 0
    else:
        subprocess.run([shutil.which("clang-22"), "-O2", "-shared", "-fPIC", "lib.c", "-o", "libscale.so"],
                       cwd=tmp_path, check=True)
    assert cc(["-O2", "-c", "-fPIC", "lib.c", "-o", "lib.o"], tmp_path).returncode == 0
    subprocess.run(["ar", "rcs", "libscale.a", "lib.o"], cwd=tmp_path, check=True)

    result = cc(["-O2", "use.c", "-L.", "-lscale", "-o", "prog"], tmp_path)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "shared library ./libscale.so" in result.stderr, result.stderr
    carries = "carries enzyme-build bitcode" in result.stderr
    assert carries == (built_by == "enzyme-build"), result.stderr
    assert "-l:libscale.a" in result.stderr and not os.path.exists(tmp_path / "prog")

    # the fix the message gives works
    result = cc(["-O2", "use.c", "-L.", "-l:libscale.a", "-o", "prog"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True).stdout == "12\n"
