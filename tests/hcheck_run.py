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


def loss_check_main(x: tuple[float, ...]) -> str:
    """`main` checking the reverse and forward derivatives of `double loss(const double *)`
    at x against central differences (step 1e-6, `hc_near` at 1e-6): `ok 2n` for n inputs.
    loss is evaluated through a pointer the optimizer cannot see through, so those direct
    calls add no evidence about the memory behind its argument that the gradient's own
    caller (only __enzyme_autodiff's) lacks. C and C++ alike."""
    n = len(x)
    xs = ", ".join(repr(v) for v in x)
    return rf"""
int main(void) {{
  double (*volatile eval)(const double *) = loss;
  double p[{n}] = {{{xs}}}, g[{n}] = {{0}};
  __enzyme_autodiff((void *)loss, enzyme_dup, p, g);
  for (int i = 0; i < {n}; i++) {{
    double h = 1e-6, pp[{n}], pm[{n}], d[{n}] = {{0}};
    for (int k = 0; k < {n}; k++) pp[k] = pm[k] = p[k];
    pp[i] += h; pm[i] -= h; d[i] = 1;
    double fd = (eval(pp) - eval(pm)) / (2 * h);
    hc_near("reverse", g[i], fd, 1e-6);
    hc_near("forward", __enzyme_fwddiff((void *)loss, enzyme_dup, p, d), fd, 1e-6);
  }}
  return hc_done();
}}
"""
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
