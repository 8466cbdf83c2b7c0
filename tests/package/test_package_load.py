"""`enzyme_build.load`: built once per content, rebuilt when sources or flags change, safe
under concurrent processes, and a clear exception on bad input."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

SOURCE = """\
#include <math.h>
double energy(const double *x, int n, double k) {
  double e = 0;
  for (int i = 0; i < n; i++) e += k * x[i] * x[i] + SHIFT * sin(x[i]);
  return e;
}
"""

LOADER = """
import sys
import numpy as np
import enzyme_build
flags = sys.argv[1:]
module = enzyme_build.load("energy.c", exports=["energy(x[n], n, k)"], name="springs",
                           extra_cflags=flags, verbose=True)
x = np.array([0.5, 1.0])
print(module.energy(x, 2.0), module.energy.vjp(x, 2.0, cotangents=[1.0])[0].tolist())
"""


def load_in_process(work, cache, *flags):
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(LOADER), *flags], cwd=work,
                            env=dict(os.environ, ENZYME_BUILD_CACHE=str(cache)), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)


def finish(proc):
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    return out, err


def entries(cache):
    return sorted(e for e in os.listdir(cache) if not e.endswith(".lock"))


def test_load_builds_once_and_rebuilds_on_change(tmp_path):
    (tmp_path / "energy.c").write_text(SOURCE)
    cache = tmp_path / "cache"
    out, err = finish(load_in_process(tmp_path, cache, "-DSHIFT=1.0"))
    assert "building springs" in err
    assert entries(cache) == [e for e in entries(cache) if e.startswith("springs-")] and len(entries(cache)) == 1
    again, err = finish(load_in_process(tmp_path, cache, "-DSHIFT=1.0"))
    assert again == out and "building" not in err
    # a changed flag and a changed source each make a new entry
    other, err = finish(load_in_process(tmp_path, cache, "-DSHIFT=0.0"))
    assert "building springs" in err and other != out
    (tmp_path / "energy.c").write_text(SOURCE.replace("k * x[i] * x[i]", "k * x[i]"))
    _, err = finish(load_in_process(tmp_path, cache, "-DSHIFT=1.0"))
    assert "building springs" in err
    assert len(entries(cache)) == 3


def test_concurrent_loads_share_one_build(tmp_path):
    (tmp_path / "energy.c").write_text(SOURCE)
    cache = tmp_path / "cache"
    procs = [load_in_process(tmp_path, cache, "-DSHIFT=2.0") for _ in range(4)]
    results = [finish(p) for p in procs]
    assert len({out for out, _ in results}) == 1
    assert sum("building springs" in err for _, err in results) == 1
    assert len(entries(cache)) == 1  # no temporary or partial directories left
    assert not [e for e in os.listdir(cache) if ".tmp-" in e or ".old-" in e]


def test_load_errors_are_exceptions_with_the_fix(tmp_path):
    (tmp_path / "energy.c").write_text(SOURCE)
    script = """
import enzyme_build
from enzyme_build.errors import EnzymeBuildError
try:
    enzyme_build.load("energy.c", exports=["energy(x[n], n)"], extra_cflags=["-DSHIFT=1"])
except EnzymeBuildError as err:
    print(err)
try:
    enzyme_build.load("energy.c", exports=["energy(x[n], n, k)"])  # SHIFT undefined
except EnzymeBuildError as err:
    print(err)
"""
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True,
                          env=dict(os.environ, ENZYME_BUILD_CACHE=str(tmp_path / "cache")))
    assert proc.returncode == 0, proc.stderr
    assert "energy takes 3 parameter(s) but the spec lists 2" in proc.stdout
    assert "fix: list every C parameter" in proc.stdout
    assert "use of undeclared identifier 'SHIFT'" in proc.stdout
    assert entries(tmp_path / "cache") == []


def test_an_included_header_is_part_of_the_key(tmp_path):
    (tmp_path / "scale.h").write_text("#define SHIFT 1.0\n")
    (tmp_path / "energy.c").write_text('#include "scale.h"\n' + SOURCE)
    cache = tmp_path / "cache"
    first, err = finish(load_in_process(tmp_path, cache))
    assert "building springs" in err
    _, err = finish(load_in_process(tmp_path, cache))
    assert "building" not in err
    (tmp_path / "scale.h").write_text("#define SHIFT 5.0\n")
    second, err = finish(load_in_process(tmp_path, cache))
    assert "building springs" in err and second != first
