"""A phi or select merging a pointer that has a shadow with one that has none (an enzyme_const
argument, a workspace loaded from an enzyme_const struct). The merged pointer's shadow was the
pointer itself on the way without one: the gradient call added derivatives into the caller's
constant memory (`p = k ? a : c` changed `c`) and read them back as derivatives (kissfft's
multi-dimensional FFT toggles between its output and the configuration's `tmpbuf`: gradient
135.03 against 131.04 by central differences). Refused now by name
(`diagnostics.refuse_mixed_shadow_merges`), at every level, in both modes; a merge with null
still builds and is right."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from ad_helpers import FD_HEAD, LEVELS, check_fd_rows, fd_main, fd_rows

REFUSED = {
    # an enzyme_const argument merged with a duplicated one
    "constant_argument": r"""
__attribute__((noinline)) double g(double *a, double *c, int k) {
  double *p = k ? a : c;
  return p[0] * p[0] + a[1];
}
int main(void) {
  double a[2] = {1, 2}, da[2] = {0}, c[2] = {3, 4};
  __enzyme_autodiff((void *)g, enzyme_dup, a, da, enzyme_const, c, enzyme_const, 0);
  printf("%g %g\n", da[0], c[0]);
  return 0;
}
""",
    # ping-pong between the output and a workspace inside an enzyme_const struct
    "workspace_toggle": r"""
typedef struct { double *tmp; int passes; } plan;
__attribute__((noinline)) void pass(const double *in, double *out, int n) {
  for (int i = 0; i < n; i++) out[i] = in[i] * in[(i + 1) % n];
}
double g(const double *x, double *y, const plan *pl) {
  const double *in = x;
  double *out = pl->passes & 1 ? y : pl->tmp;
  for (int k = 0; k < pl->passes; k++) {
    pass(in, out, 4);
    in = out;
    out = out == y ? pl->tmp : y;
  }
  return y[0] + y[3];
}
int main(void) {
  double x[4] = {0.5, 1, 1.5, 2}, dx[4] = {0}, y[4] = {0}, dy[4] = {0}, t[4];
  plan pl = {t, 2};
  __enzyme_autodiff((void *)g, enzyme_dup, x, dx, enzyme_dup, y, dy, enzyme_const, &pl);
  printf("%g\n", dx[0]);
  return 0;
}
""",
}

NULL_MERGE = r"""
double f(const double *x) {
  double w[4];
  for (int i = 0; i < 4; i++) w[i] = x[i] * x[i];
  const double *p = x[0] > 0 ? w : NULL;
  double s = 0;
  for (int i = 0; i < 4; i++) s += p ? p[i] * x[(i + 1) % 4] : x[i];
  return s;
}
"""


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_mixed_merge_is_refused(tmp_path, name, level):
    flags, env = LEVELS[level]
    src, exe = tmp_path / "p.c", tmp_path / "p"
    src.write_text(FD_HEAD + REFUSED[name])
    cli = os.path.join(os.path.dirname(sys.executable), "enzyme-build")
    r = subprocess.run([cli, "cc", *flags, str(src), "-o", str(exe), "-lm"], capture_output=True, text=True,
                       timeout=300, env={**os.environ, **env})
    assert r.returncode == 1 and "Traceback" not in r.stderr, (r.stdout, r.stderr)
    assert "is merged with one that has one" in r.stderr and "enzyme_dup" in r.stderr
    assert not exe.exists()


@pytest.mark.parametrize("level", sorted(LEVELS))
def test_merge_with_null_builds(tmp_path, level):
    flags, env = LEVELS[level]
    check_fd_rows(fd_rows(tmp_path, FD_HEAD + NULL_MERGE + fd_main(4), flags, env), 4)
