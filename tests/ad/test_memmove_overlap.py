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


# fuzz seed 6036: part of an array is refilled from a buffer that carries no derivative
# (its shadow is a zeroed block, so the shadow copy becomes a memset), then the array is
# shifted with memmove. LLVM 22's MemCpyOpt deletes a memmove whose source reaches past a
# memset of its destination (llvm/llvm-project#206451); derived code calls memmove out of
# line (ad/passes.py: memmoves_out_of_line) so the shift of the tangents is kept.
ZEROED_THEN_SHIFTED = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
extern int enzyme_dup;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
__attribute__((noinline)) double f(const double *x) {
  double a[6];
  double *b = malloc(6 * sizeof(double));
  for (int i = 0; i < 6; i++) { a[i] = x[(i + 1) % 4] * x[(i + 1) % 4] + 0.1 * i; b[i] = 0.3 + i; }
  memcpy(a + OFF, b + 1, LEN * sizeof(double));
  memmove(a + DST, a + SRC, 4 * sizeof(double));
  static const double w[6] = {0.654, 0.780, -0.523, 0.462, -0.401, 0.364};
  double out = 0;
  for (int i = 0; i < 6; i++) out += w[i] * a[i] + b[i];
  free(b);
  return out;
}
int main(void) {
  double x[4] = {-0.4102, 0.3909, 0.5393, -0.0697}, g[4] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, g);
  for (int i = 0; i < 4; i++) {
    double e[4] = {0}, xp[4], xm[4];
    e[i] = 1;
    memcpy(xp, x, sizeof xp); memcpy(xm, x, sizeof xm);
    xp[i] += 1e-6; xm[i] -= 1e-6;
    printf("%.12g %.12g %.12g\n", g[i], __enzyme_fwddiff((void *)f, enzyme_dup, x, e), (f(xp) - f(xm)) / 2e-6);
  }
  return 0;
}
"""


@pytest.mark.parametrize("level", ["-O2", "-O3"])
@pytest.mark.parametrize("off, len_, dst, src", [(1, 4, 1, 2), (1, 3, 1, 2), (0, 4, 0, 1), (1, 4, 2, 1)],
                         ids=["seed6036", "shorter-refill", "from-start", "shift-up"])
def test_memmove_after_a_copy_from_zeroed_shadow(tmp_path, level, off, len_, dst, src):
    source = tmp_path / "p.c"
    source.write_text(ZEROED_THEN_SHIFTED)
    exe = tmp_path / "p"
    defines = [f"-DOFF={off}", f"-DLEN={len_}", f"-DDST={dst}", f"-DSRC={src}"]
    r = subprocess.run([ENZYME_BUILD, "cc", level, *defines, str(source), "-o", str(exe), "-lm"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    rows = [[float(v) for v in line.split()] for line in out.stdout.splitlines()]
    assert len(rows) == 4, out.stdout + out.stderr
    for i, (rev, fwd, fd) in enumerate(rows):
        assert rev == pytest.approx(fwd, rel=1e-10, abs=1e-12), (i, rows)
        assert rev == pytest.approx(fd, rel=1e-6, abs=1e-6), (i, rows)


def test_memmoves_out_of_line_rewrites_derived_calls():
    from enzyme_build.ad.passes import memmoves_out_of_line
    text = ("define internal void @fwddiffe_f(ptr %a) {\nentry:\n"
            "  call void @llvm.memmove.p0.p0.i64(ptr noundef nonnull align 8 %a, ptr %b, i64 32, i1 false), !dbg !7\n"
            "  call void @llvm.memmove.p0.p0.i64(ptr %a, ptr %b, i64 %n, i1 true)\n"
            "  ret void\n}\n")
    out = memmoves_out_of_line(text)
    assert "call void @__enzyme_build_memmove(ptr noundef nonnull align 8 %a, ptr %b, i64 32), !dbg !7" in out
    assert "i1 true)" in out   # a volatile memmove stays as written
