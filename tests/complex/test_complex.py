"""Complex arithmetic (docs/complex.md): C99 `_Complex` and `std::complex<double>` programs
built with the real CLI, differentiated in reverse, forward and split mode, checked against
central differences and closed forms."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "programs")
HCHECK = os.path.join(HERE, "..", "acceptance", "hcheck.h")
ENZYME_BUILD = os.path.join(os.path.dirname(sys.executable), "enzyme-build")


def build_and_run(tmp_path, source: str, opt: str, env=None, extra=()) -> int:
    shutil.copy(HCHECK, tmp_path)
    shutil.copy(os.path.join(PROGRAMS, source), tmp_path)
    driver = "c++" if source.endswith(".cc") else "cc"
    build = subprocess.run([ENZYME_BUILD, driver, opt, "-I.", source, "-o", "prog", "-lm", *extra], cwd=tmp_path,
                           capture_output=True, text=True, timeout=300, env=env)
    assert build.returncode == 0, build.stdout + build.stderr
    run = subprocess.run([str(tmp_path / "prog")], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    m = re.search(r"^ok (\d+)$", run.stdout, re.MULTILINE)
    assert m, run.stdout + run.stderr
    return int(m.group(1))


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_c_double_all_modes(tmp_path, opt):
    assert build_and_run(tmp_path, "all_double.c", opt) == 16


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_c_float(tmp_path, opt):
    assert build_and_run(tmp_path, "all_float.c", opt) == 8


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_std_complex_all_modes(tmp_path, opt):
    assert build_and_run(tmp_path, "stdcomplex.cc", opt) == 12


def test_library_kept_and_untouched_programs(tmp_path):
    """ENZYME_BUILD_KEEP keeps the generated C; it holds only the functions the program uses."""
    keep = tmp_path / "keep"
    keep.mkdir(mode=0o700)
    env = dict(os.environ, ENZYME_BUILD_KEEP=str(keep))
    assert build_and_run(tmp_path, "all_double.c", "-O0", env=env) == 16
    source = (keep / "complex-library.c").read_text()
    assert "__enzyme_complex___muldc3" in source and "__enzyme_complex_cexp(" in source
    assert "cexpf" not in source and "__mulsc3" not in source


def test_module_without_complex_is_unchanged():
    from enzyme_build.complex import attach_complex_rules
    text = "declare double @exp(double)\ndefine double @f(double %x) {\n  ret double %x\n}\n"
    assert attach_complex_rules(text) is text


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_infinite_operands_keep_annex_g_results(tmp_path, opt):
    assert build_and_run(tmp_path, "annex_g.c", opt) == 7


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_vector_forward(tmp_path, opt):
    assert build_and_run(tmp_path, "vector_forward.c", opt) == 2


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_std_complex_float(tmp_path, opt):
    assert build_and_run(tmp_path, "stdcomplex_float.cc", opt) == 2


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_inverse_functions(tmp_path, opt):
    assert build_and_run(tmp_path, "inverse.c", opt, extra=("-ldl",)) == 96


def test_every_entry_compiles():
    """The whole table, both precisions, compiles to one library with a body for each symbol."""
    from enzyme_build.complex import library_module
    from enzyme_build.complex.generate import entry_name
    from enzyme_build.complex.table import known_names
    known = known_names()
    module = library_module([(s, *known[s]) for s in sorted(known)])
    text = module.text()
    for symbol in known:
        assert f"@{entry_name(symbol)}(" in text, symbol
    assert "__muldc3(" not in text.replace(entry_name("__muldc3"), "") and "@__divdc3(" not in text


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_c_long_double_all_modes(tmp_path, opt):
    """x86's `long double _Complex`: clang calls __mulxc3/__divxc3 and the `l` libm functions."""
    assert build_and_run(tmp_path, "all_long_double.c", opt) == 16


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_std_complex_long_double(tmp_path, opt):
    assert build_and_run(tmp_path, "stdcomplex_long_double.cc", opt) == 8
