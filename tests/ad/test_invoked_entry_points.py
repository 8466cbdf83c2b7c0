"""AD entry points called with `invoke`: C++ callers whose calls of __enzyme_autodiff /
__enzyme_fwddiff may unwind through a landing pad (objects to destroy in scope).

The class: the call becomes the derived function's call and a branch to the normal
destination, so the landing pad loses the call's block as a predecessor; when the pad
begins with phis (several invokes sharing one pad: a loop unrolled by the optimizer, two
AD calls with live vectors, a try block) their entries for that block must go too, and a
pad left without predecessors keeps its phis' values as `freeze poison`. A std::vector
built in a short unrolled loop and handed over as the shadow was an internal error (LLVM's
verifier: "PHINode should have one entry for each predecessor") at -O0 and -O2.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ad_helpers import LEVELS

HEAD = r"""
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <vector>
extern int enzyme_dup, enzyme_const;
extern "C" void __enzyme_autodiff(void *, ...);
extern "C" double __enzyme_fwddiff(void *, ...);
extern "C" double f(const double *p) { return std::sin(p[0]) * p[1] + p[1] * p[1]; }
static int bad = 0;
#define CHECK(got, want) do { if (std::fabs((got) - (want)) > 1e-12) { std::printf("got %.17g want %.17g\n", \
    (double)(got), (double)(want)); bad = 1; } } while (0)
"""

PROGRAMS = {
    # the reproducer: a vector per iteration of a loop the optimizer unrolls (three invokes,
    # one landing pad whose phi names them all)
    "unrolled_loop": r"""
int main() {
  double p[2] = {0.5, 2.0};
  for (int i = 0; i < 3; i++) {
    std::vector<double> d(2, 0.0);
    __enzyme_autodiff((void *)f, enzyme_dup, p, d.data());
    CHECK(d[0], std::cos(0.5) * 2.0);
    CHECK(d[1], std::sin(0.5) + 4.0);
  }
  return bad;
}
""",
    # reverse and forward calls while two vectors are alive: each call may unwind into a
    # pad destroying what exists at that point
    "two_vectors": r"""
int main() {
  double p[2] = {0.25, -1.5};
  std::vector<double> d(2, 0.0);
  __enzyme_autodiff((void *)f, enzyme_dup, p, d.data());
  std::vector<double> e{1.0, 0.0};
  double t0 = __enzyme_fwddiff((void *)f, enzyme_dup, p, e.data());
  e = {0.0, 1.0};
  double t1 = __enzyme_fwddiff((void *)f, enzyme_dup, p, e.data());
  CHECK(d[0], t0);
  CHECK(d[1], t1);
  CHECK(d[0], std::cos(0.25) * -1.5);
  return bad;
}
""",
    # inside a try block whose handler is also reached from a call that can throw: the pad
    # keeps that predecessor
    "try_block": r"""
__attribute__((noinline)) static void validate(const double *p) {
  if (!(p[1] == p[1])) throw std::runtime_error("nan");
}
int main() {
  double p[2] = {1.25, 0.5};
  double sum = 0;
  for (int i = 0; i < 2; i++) {
    try {
      std::vector<double> d(2, 0.0);
      validate(p);
      __enzyme_autodiff((void *)f, enzyme_dup, p, d.data());
      sum += d[0] + d[1];
    } catch (const std::exception &) {
      return 2;
    }
  }
  CHECK(sum, 2 * (std::cos(1.25) * 0.5 + std::sin(1.25) + 1.0));
  return bad;
}
""",
}


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_invoked_entry_point(name, level, tmp_path):
    flags, env = LEVELS[level]
    src, exe = os.path.join(str(tmp_path), "p.cc"), os.path.join(str(tmp_path), "p")
    with open(src, "w") as fh:
        fh.write(HEAD + PROGRAMS[name])
    cli = os.path.join(os.path.dirname(sys.executable), "enzyme-build")
    r = subprocess.run([cli, "c++", *flags, src, "-o", exe], capture_output=True, text=True, timeout=600,
                       env={**os.environ, **env})
    assert r.returncode == 0, r.stderr
    out = subprocess.run([exe], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
