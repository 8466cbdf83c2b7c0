"""The reverse of an overlapping memmove of doubles, both directions, at -O0 and -O2.

memmove(a + 1, a + 2, …) shifts down (dst below src), memmove(a + 2, a + 1, …) shifts up.
The adjoint walk must go away from the overlap (fuzz-02, fuzz-08 in docs/fuzzing.md: the
walk went up in both cases, and a shift down got wrong gradients silently)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

ENZYME_BUILD = os.path.join(os.path.dirname(sys.executable), "enzyme-build")

PROGRAM = r"""
#include <stdio.h>
#include <string.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
/* a[i] = x[i] (i < 6); shift by SHIFT elements, then f = sum w_i a_i^2 */
__attribute__((noinline)) double f(const double *x, int down) {
  double a[6];
  for (int i = 0; i < 6; i++) a[i] = x[i];
  if (down) memmove(a + 1, a + 2, 4 * sizeof(double));   /* a = x0 x2 x3 x4 x5 x5 */
  else memmove(a + 2, a + 1, 4 * sizeof(double));        /* a = x0 x1 x1 x2 x3 x4 */
  double s = 0;
  for (int i = 0; i < 6; i++) s += (i + 1) * a[i] * a[i];
  return s;
}
int main(void) {
  const double x[6] = {0.5, -1.0, 1.5, 2.0, -0.5, 0.25};
  for (int down = 0; down < 2; down++) {
    double g[6] = {0};
    __enzyme_autodiff((void *)f, enzyme_dup, x, g, enzyme_const, down);
    for (int i = 0; i < 6; i++) {
      double e[6] = {0}; e[i] = 1;
      double t = __enzyme_fwddiff((void *)f, enzyme_dup, x, e, enzyme_const, down);
      printf("%d %d %.12g %.12g\n", down, i, g[i], t);
    }
  }
  return 0;
}
"""


def expected(down: int) -> list[float]:
    x = [0.5, -1.0, 1.5, 2.0, -0.5, 0.25]
    # which x each a[i] holds after the move
    src = [0, 2, 3, 4, 5, 5] if down else [0, 1, 1, 2, 3, 4]
    grad = [0.0] * 6
    for i, k in enumerate(src):
        grad[k] += 2 * (i + 1) * x[k]
    return grad


@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_overlapping_memmove_both_directions(tmp_path, level):
    (tmp_path / "m.c").write_text(PROGRAM)
    done = subprocess.run([ENZYME_BUILD, "cc", level, "m.c", "-o", "m"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lines = subprocess.run([str(tmp_path / "m")], capture_output=True, text=True).stdout.split("\n")
    for line in filter(None, lines):
        down, i, rev, fwd = line.split()
        want = expected(int(down))[int(i)]
        assert float(rev) == pytest.approx(want, rel=1e-12, abs=1e-12), line
        assert float(fwd) == pytest.approx(want, rel=1e-12, abs=1e-12), line
