"""End to end through the compiler wrapper: `enzyme-build cc` on the shared examples."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from ad_helpers import EXAMPLES, enzyme_build_cli


def _wrapper_links(tmp_path) -> bool:
    src = tmp_path / "probe.c"
    src.write_text("int main(void) { return 0; }\n")
    proc = subprocess.run([enzyme_build_cli(), "cc", str(src), "-o", str(tmp_path / "probe")],
                          capture_output=True, text=True)
    return proc.returncode == 0


@pytest.mark.parametrize("name", ["relu3", "norm", "split_mode"])
def test_examples_through_wrapper(tmp_path, name):
    if not os.path.exists(enzyme_build_cli()) or not _wrapper_links(tmp_path):
        pytest.skip("the wrapper's link step is not available")
    for f in ("hcheck.h", name + ".c"):
        shutil.copy(os.path.join(EXAMPLES, f), tmp_path)
    exe = tmp_path / name
    subprocess.run([enzyme_build_cli(), "cc", "-O2", "-I.", name + ".c", "-o", str(exe), "-lm"],
                   cwd=tmp_path, check=True, capture_output=True, text=True)
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("ok "), proc.stdout + proc.stderr


def test_separate_compilation_through_wrapper(tmp_path):
    """Function differentiated in one TU, called in another (whole-program IR)."""
    if not os.path.exists(enzyme_build_cli()) or not _wrapper_links(tmp_path):
        pytest.skip("the wrapper's link step is not available")
    (tmp_path / "lib.c").write_text("#include <math.h>\ndouble f(double x) { return sin(x) * x; }\n")
    (tmp_path / "main.c").write_text("""#include <math.h>
#include <stdio.h>
double f(double);
double __enzyme_autodiff(void *, ...);
int main(void) { double g = __enzyme_autodiff((void *)f, 0.5);
  double want = cos(0.5) * 0.5 + sin(0.5);
  if (fabs(g - want) > 1e-12) { printf("bad %g %g\\n", g, want); return 1; }
  printf("ok 1\\n"); return 0; }
""")
    cli = enzyme_build_cli()
    for f in ("lib.c", "main.c"):
        subprocess.run([cli, "cc", "-O2", "-c", f], cwd=tmp_path, check=True, capture_output=True)
    subprocess.run([cli, "cc", "lib.o", "main.o", "-o", "prog", "-lm"], cwd=tmp_path, check=True,
                   capture_output=True)
    proc = subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_std_copy_into_vectors_through_wrapper(tmp_path, opt):
    """At -O0 std::copy ends in an untyped memmove inside a library helper; the accesses of
    the callers decide that it moves doubles."""
    if not os.path.exists(enzyme_build_cli()) or not _wrapper_links(tmp_path):
        pytest.skip("the wrapper's link step is not available")
    programs = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs")
    for f in ("adcheck.h", "stdcopy.cc"):
        shutil.copy(os.path.join(programs, f), tmp_path)
    exe = tmp_path / "stdcopy"
    subprocess.run([enzyme_build_cli(), "c++", opt, "-I.", "stdcopy.cc", "-o", str(exe)],
                   cwd=tmp_path, check=True, capture_output=True, text=True)
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok 8", proc.stdout + proc.stderr


def test_libstdcxx_at_O0_through_wrapper(tmp_path):
    """At -O0 every function is noinline (no optnone: the wrapper disables it); with no type
    tags anywhere the pre-AD pipeline may still inline, so copies inside libstdc++ helpers
    are typed where they are used."""
    if not os.path.exists(enzyme_build_cli()) or not _wrapper_links(tmp_path):
        pytest.skip("the wrapper's link step is not available")
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs")
    exe = tmp_path / "stdlib_O0"
    subprocess.run([enzyme_build_cli(), "c++", "-O0", "-I", here, os.path.join(here, "stdlib_O0.cc"),
                    "-o", str(exe)], check=True, capture_output=True, text=True)
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok 12", proc.stdout + proc.stderr
