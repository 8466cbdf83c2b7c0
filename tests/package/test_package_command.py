"""`enzyme-build package` as a user runs it: what it generates, `pip install`, rebuilding over a
previous package, and bad input (one message, exit 1, no partial output, no temporary files)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from package_helpers import PROGRAMS, run_package, run_script

PHYSICS = os.path.join(PROGRAMS, "physics.c")


def test_package_layout_and_header(physics):
    package = physics / "physics"
    names = sorted(os.listdir(package))
    for expected in ("__init__.py", "_exports.py", "_runtime.py", "torch.py", "jax.py",
                     "libphysics.so", "physics.h"):
        assert expected in names
    header = (package / "physics.h").read_text()
    assert "void physics_energy_reverse(const double *x, double *d_x, int n, const double *k, " \
           "double *d_k, double *ret, double *d_ret);" in header
    assert (physics / "pyproject.toml").exists()
    # the header compiles as C and as C++
    for language in ("c", "c++"):
        proc = subprocess.run(["clang-22", "-fsyntax-only", "-Wall", "-Werror", "-x", language,
                               str(package / "physics.h")], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr


def test_header_serves_a_c_program(physics, tmp_path):
    client = tmp_path / "client.c"
    client.write_text("""
#include <math.h>
#include <stdio.h>
#include "physics.h"
int main(void) {
  double x[4] = {0.1, 0.7, 1.9, 3.2}, dx[4] = {0}, k = 1.5, dk = 0, e, de = 1.0;
  physics_energy_reverse(x, dx, 4, &k, &dk, &e, &de);
  double h = 1e-6, xp[4] = {0.1 + h, 0.7, 1.9, 3.2}, xm[4] = {0.1 - h, 0.7, 1.9, 3.2};
  double fd = (energy(xp, 4, k) - energy(xm, 4, k)) / (2 * h);
  printf("%s\\n", fabs(fd - dx[0]) < 1e-6 && fabs(e - energy(x, 4, k)) < 1e-12 ? "ok" : "bad");
  return 0;
}
""")
    package = physics / "physics"
    proc = subprocess.run(["clang-22", str(client), "-I", str(package), "-L", str(package), "-lphysics",
                           f"-Wl,-rpath,{package}", "-lm", "-o", str(tmp_path / "client")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert subprocess.run([str(tmp_path / "client")], capture_output=True, text=True).stdout.strip() == "ok"


def test_pip_install_then_import(physics, tmp_path):
    target = tmp_path / "site"
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                           "--no-index", "--target", str(target), str(physics)],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = run_script("""
import numpy as np, physics
assert physics.__file__.startswith(%r)
print(round(float(physics.energy(np.zeros(3), 2.0)), 6))
""" % str(target), str(target))
    assert out.strip() == "5.0"


def test_rebuild_replaces_previous_package(tmp_path):
    source = tmp_path / "one.c"
    source.write_text("double sq(double x) { return x * x; }\n")
    for _ in range(2):
        proc = run_package([str(source), "--name", "one", "-o", "out", "--export", "sq(x)"], cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
    assert sorted(os.listdir(tmp_path)) == ["one.c", "out"]
    out = run_script("import one; print(one.sq(3.0), one.sq.vjp(3.0, cotangents=[1.0]))", str(tmp_path / "out"))
    assert out.split()[0] == "9.0"


BAD_INPUTS = [
    (["--export", "energy(x[n], n"], "bad export spec 'energy(x[n], n': expected ','"),
    (["--export", "energy(x[n], m, k)"], "parameter 2 'm' is named 'n' in C"),
    (["--export", "energy(x, n, k)"], "parameter 1 'x' is a pointer (const double *) but the spec gives no length"),
    (["--export", "nosuch(x[n], n)"], "function 'nosuch' is not declared in"),
    (["--export", "energy(x[n], n)"], "energy takes 3 parameter(s) but the spec lists 2"),
    (["--export", "residual(p[n], n, r[n*q])"], "the length of 'r' uses 'q', which is not a parameter"),
    (["--export", "energy(x[n], n, k)", "--export", "energy(x[n], n, k)"], "'energy' is exported twice"),
    ([], "nothing to export"),
]


@pytest.mark.parametrize("extra, message", BAD_INPUTS)
def test_bad_specs_are_one_clear_error(tmp_path, extra, message):
    proc = run_package([PHYSICS, "--name", "physics", "-o", "out", *extra], cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith("enzyme-build: error:"), proc.stderr
    assert message in proc.stderr
    assert "fix:" in proc.stderr and "Traceback" not in proc.stderr
    assert os.listdir(tmp_path) == []  # no output directory, no temporary files


def test_compile_failure_leaves_nothing(tmp_path):
    source = tmp_path / "broken.c"
    source.write_text("double f(const double *x, int n) { return x[0] }\n")
    proc = run_package([str(source), "--name", "broken", "-o", "out", "--export", "f(x[n], n)"], cwd=tmp_path)
    assert proc.returncode == 1
    assert "enzyme-build: error:" in proc.stderr and "expected ';'" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert os.listdir(tmp_path) == ["broken.c"]


def test_undefined_function_at_link_is_an_error(tmp_path):
    source = tmp_path / "decl.c"
    source.write_text("double f(const double *x, int n);\n")
    proc = run_package([str(source), "--name", "decl", "-o", "out", "--export", "f(x[n], n)"], cwd=tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "building libdecl.so failed" in proc.stderr
    assert os.listdir(tmp_path) == ["decl.c"]


@pytest.mark.parametrize("args, message", [
    (["missing.c", "--name", "m", "-o", "out", "--export", "f(x)"], "no such file: missing.c"),
    ([PHYSICS, "--name", "9lives", "-o", "out", "--export", "energy(x[n], n, k)"], "is not a Python identifier"),
    ([PHYSICS, "--name", "torch", "-o", "out", "--export", "energy(x[n], n, k)"], "would hide the module"),
    ([PHYSICS, "--name", "p", "-o", "out", "--export", "energy(x[n], n, k); rm -rf /"], "bad export spec"),
])
def test_bad_arguments(tmp_path, args, message):
    proc = run_package(args, cwd=tmp_path)
    assert proc.returncode == 1 and message in proc.stderr, proc.stderr
    assert os.listdir(tmp_path) == []


def test_existing_directory_is_not_overwritten(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "precious.txt").write_text("keep")
    proc = run_package([PHYSICS, "--name", "p", "-o", "out", "--export", "energy(x[n], n, k)"], cwd=tmp_path)
    assert proc.returncode == 1 and "is not a package made by enzyme-build package" in proc.stderr
    assert os.listdir(tmp_path / "out") == ["precious.txt"]
    assert sorted(os.listdir(tmp_path)) == ["out"]


def test_parameter_names_that_python_or_cxx_reserve(tmp_path):
    source = tmp_path / "kw.c"
    source.write_text("double kw(const double *new, int class, double this, const double *type) {\n"
                      "  double s = 0; for (int i = 0; i < class; i++) s += this * new[i] * new[i] + type[i];\n"
                      "  return s;\n}\n")
    proc = run_package([str(source), "--name", "kw", "-o", "out",
                        "--export", "kw(new[class], class, this, type[class])"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = run_script("""
import jax
jax.config.update("jax_enable_x64", True)
import numpy as np, kw
x = np.array([1.0, 2.0])
print(kw.kw(x, 3.0, x), kw.kw.vjp(x, 3.0, x, cotangents=[1.0])[0].tolist(),
      jax.grad(kw.jax.kw)(x, 3.0, x).tolist())
""", str(tmp_path / "out"))
    assert out.split("[")[0].strip() == "18.0" and out.count("[6.0, 12.0]") == 2


def test_a_function_named_like_a_python_keyword_is_refused(tmp_path):
    source = tmp_path / "pk.c"
    source.write_text("double pass(double x) { return x; }\n")
    proc = run_package([str(source), "--name", "pk", "-o", "out", "--export", "pass(x)"], cwd=tmp_path)
    assert proc.returncode == 1 and "cannot export 'pass': it is a Python keyword" in proc.stderr
    assert sorted(os.listdir(tmp_path)) == ["pk.c"]
