"""Forward mode end to end through the compiler wrapper: separate compilation, a forward rule
given with the enzyme attribute in another TU, and the installed enzyme/enzyme.h header."""
from __future__ import annotations

import subprocess

from forward_helpers import enzyme_build_cli

LIB = r"""
#include <math.h>
double wave(double x) { return sin(x); }
double model(const double *p, int n, double t) {
  double s = 0.0;
  for (int i = 0; i < n; i++) s += p[i] * wave(t * (i + 1));
  return s;
}
"""
MAIN = r"""
#include <enzyme/enzyme.h>
#include <math.h>
#include <stdio.h>
double wave(double x);
typedef struct { double primal, tangent; } dual;
/* deliberately not the true derivative (cos): the check below sees the rule is used */
dual wave_fwd(double x, double dx) { dual r = {sin(x), 0.5 * dx}; return r; }
double wave(double x) __attribute__((enzyme("forward", wave_fwd)));
double model(const double *p, int n, double t);
typedef struct { double d[4]; } vec4;
vec4 __enzyme_fwddiff4(void *, ...);
int main(void) {
  double p[3] = {1.0, -2.0, 0.5}, dp[3] = {0.0, 0.0, 0.0}, t = 0.3;
  double dt = __enzyme_fwddiff((void *)model, enzyme_const, p, 3, t, 1.0);
  double want = 0.5 * (1.0 * 1 - 2.0 * 2 + 0.5 * 3);
  double e[4][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0, 0, 0}};
  vec4 j = __enzyme_fwddiff4((void *)model, enzyme_width, 4, enzyme_dup, p, e[0], e[1], e[2], e[3], 3,
                             t, 0.0, 0.0, 0.0, 1.0);
  int bad = fabs(dt - want) > 1e-12 || fabs(j.d[3] - want) > 1e-12;
  for (int i = 0; i < 3; i++) bad |= fabs(j.d[i] - sin(t * (i + 1))) > 1e-12;
  printf(bad ? "FAIL %g %g\n" : "ok 5\n", dt, want);
  return bad;
}
"""


def test_forward_rule_attribute_across_tus(tmp_path):
    (tmp_path / "lib.c").write_text(LIB)
    (tmp_path / "main.c").write_text(MAIN)
    cli = enzyme_build_cli()
    for name in ("lib", "main"):
        subprocess.run([cli, "cc", "-O2", "-c", f"{name}.c", "-o", f"{name}.o"], cwd=tmp_path, check=True,
                       capture_output=True, text=True)
    proc = subprocess.run([cli, "cc", "lib.o", "main.o", "-o", "prog", "-lm"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    run = subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and run.stdout.startswith("ok "), run.stdout + run.stderr
