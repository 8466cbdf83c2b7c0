"""Building and running a self-checking program (tests/acceptance/hcheck.h: `hc_near`, then
`hc_done` prints `ok N`) given as source text, with `enzyme-build cc|c++`."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

# a C++ class hierarchy with virtual methods (after hcheck.h, <cmath> and the Enzyme
# declarations): Harmonic and Morse potentials, and the energy of an array of them
POTENTIALS_CXX = r"""
#include "hcheck.h"
#include <cmath>
#include <cstring>
extern "C" {
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
}
template <typename T> T __enzyme_virtualreverse(T);
struct Potential { virtual double eval(double r) const = 0; virtual ~Potential() {} };
struct Harmonic : Potential {
  double k; explicit Harmonic(double k) : k(k) {}
  double eval(double r) const override { return 0.5 * k * r * r; } };
struct Morse : Potential {
  double a; explicit Morse(double a) : a(a) {}
  double eval(double r) const override { double e = 1 - std::exp(-a * r); return e * e; } };
double energy(Potential *const *p, const double *r, int n) {
  double e = 0;
  for (int i = 0; i < n; i++) e += p[i]->eval(r[i]);
  return e;
}
"""

ENZYME_BUILD = os.path.join(os.path.dirname(sys.executable), "enzyme-build")
HCHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "acceptance", "hcheck.h")


def build_and_run_hcheck(work, source: str, *, cxx: bool = False, opt: str = "-O2",
                         env_extra: dict | None = None, check: bool = True, flags: tuple = ()) -> subprocess.CompletedProcess:
    """Build `source` in the directory `work` (created), run it, and (with `check`) assert it
    exited 0 printing `ok N`; returns the run."""
    os.makedirs(work)
    shutil.copy(HCHECK, work)
    name = "prog.cc" if cxx else "prog.c"
    with open(os.path.join(work, name), "w") as f:
        f.write(source)
    env = dict(os.environ, **(env_extra or {}))
    build = subprocess.run([ENZYME_BUILD, "c++" if cxx else "cc", opt, *flags, "-I.", name, "-o", "prog", "-lm"],
                           cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr
    run = subprocess.run([os.path.join(work, "prog")], cwd=work, capture_output=True, text=True, timeout=60)
    assert not check or run.returncode == 0 and re.search(r"^ok \d+$", run.stdout, re.M), run.stdout + run.stderr
    return run


def checks_passed(run: subprocess.CompletedProcess) -> int:
    return int(re.search(r"^ok (\d+)$", run.stdout, re.M).group(1))
