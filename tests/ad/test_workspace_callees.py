"""A workspace that has no shadow, written by a function the code calls: a buffer reached
through a struct the caller passed as enzyme_const (`fill(w->buf, x)`; kissfft's `kiss_fftr`
writes its `st->tmpbuf` through `kiss_fft`). The callee took the buffer for constant memory
and dropped the derivatives it stored there, and the caller read the buffer back as constant
data: every gradient through it 0, silently, while the same store written inline was refused.
Now refused at the call alike (`diagnostics.refuse_lost_call_stores`,
`Engine.writes_active_through`), at -O0, -O2 and with AD before optimization, in reverse and
forward mode; the fix the message names (the workspace as an enzyme_dup argument) gives the
right gradient. Calls that write only constant data through such a pointer still build; memory
the user passed as enzyme_const itself still builds, with the warning a store written in the
function gets. Before: one_level and two_levels built with gradients 0 at -O2 and with AD
before optimization (4 of the 9 refused builds), and the warning was missing."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from ad_helpers import FD_HEAD, LEVELS, check_fd_rows, fd_rows

WS = r"""
typedef struct { double *buf; int n; double *aux; long *counts; } ws;
"""

# g(x, w): the workspace struct w is passed enzyme_const (main, below)
REFUSED = {
    # the callee writes x's squares into the workspace; f reads them back
    "one_level": r"""
__attribute__((noinline)) void fill(double *out, const double *in, int n) {
  for (int i = 0; i < n; i++) out[i] = in[i] * in[i];
}
double g(const double *x, ws *w) {
  fill(w->buf, x, w->n);
  double s = 0;
  for (int i = 0; i < w->n; i++) s += w->buf[i] * (i + 1);
  return s;
}
""",
    # two levels down: the callee hands the buffer to another that writes it
    "two_levels": r"""
__attribute__((noinline)) void put(double *out, double v, int i) { out[i] = sin(v) * v; }
__attribute__((noinline)) void fill(double *out, const double *in, int n) {
  for (int i = 0; i < n; i++) put(out, in[i], i);
}
double g(const double *x, ws *w) {
  fill(w->buf, x, w->n);
  double s = 0;
  for (int i = 0; i < w->n; i++) s += w->buf[i] * w->buf[i];
  return s;
}
""",
    # an in-place transform of the workspace, copied in from the input first
    "copied_in": r"""
__attribute__((noinline)) void smooth(double *v, int n) {
  for (int i = 1; i < n; i++) v[i] = 0.5 * (v[i] + v[i - 1] * v[i - 1]);
}
double g(const double *x, ws *w) {
  memcpy(w->buf, x, sizeof(double) * w->n);
  smooth(w->buf, w->n);
  return w->buf[w->n - 1];
}
""",
}

BUILT = {
    # the callee writes constant data only (counts, a table from constants) into the workspace
    "constant_writes": r"""
__attribute__((noinline)) void tally(long *counts, const double *in, int n) {
  for (int i = 0; i < n; i++) counts[i] = in[i] > 0;
}
__attribute__((noinline)) void table(double *aux, int n) {
  for (int i = 0; i < n; i++) aux[i] = 1.0 / (i + 1);
}
double g(const double *x, ws *w) {
  tally(w->counts, x, w->n);
  table(w->aux, w->n);
  double s = 0;
  for (int i = 0; i < w->n; i++) s += (w->counts[i] + w->aux[i]) * x[i] * x[i];
  return s;
}
""",
}


MAIN = r"""
int main(void) {
  static double B[4], A[4]; static long C[4];
  ws w = {B, 4, A, C};
  double x[4] = {0.5, -1.25, 1.5, 0.75}, gx[4] = {0};
  __enzyme_autodiff((void *)g, enzyme_dup, x, gx, enzyme_const, &w);
  for (int i = 0; i < 4; i++) {
    double e[4] = {0}, xp[4], xm[4], h = 1e-6;
    e[i] = 1;
    for (int k = 0; k < 4; k++) { xp[k] = x[k]; xm[k] = x[k]; }
    xp[i] += h; xm[i] -= h;
    double fd = (g(xp, &w) - g(xm, &w)) / (2 * h);
    printf("%.15g %.15g %.15g\n", gx[i], __enzyme_fwddiff((void *)g, enzyme_dup, x, e, enzyme_const, &w), fd);
  }
  return 0;
}
"""


def program(body: str) -> str:
    """A program differentiating g(x, w) with the workspace struct w passed enzyme_const."""
    return FD_HEAD + WS + body + MAIN


def build(tmp_path, text: str, level: str):
    flags, env = LEVELS[level]
    src, exe = tmp_path / "p.c", tmp_path / "p"
    src.write_text(text)
    cli = os.path.join(os.path.dirname(sys.executable), "enzyme-build")
    return subprocess.run([cli, "cc", *flags, str(src), "-o", str(exe), "-lm"], capture_output=True, text=True,
                          timeout=300, env={**os.environ, **env}), exe


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_workspace_written_by_a_callee_is_refused(tmp_path, name, level):
    r, exe = build(tmp_path, program(REFUSED[name]), level)
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    assert "an active value is stored where enzyme-build cannot give the memory a shadow" in r.stderr
    assert "enzyme_dup" in r.stderr
    assert not exe.exists()


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(BUILT))
def test_constant_writes_through_a_workspace_build(tmp_path, name, level):
    flags, env = LEVELS[level]
    check_fd_rows(fd_rows(tmp_path, program(BUILT[name]), flags, env), 4)


SHADOWED = REFUSED["one_level"] + r"""
int main(void) {
  static double b[4], sb[4];
  ws w = {b, 4, 0, 0}, sw = {sb, 4, 0, 0};
  double x[4] = {0.5, -1.25, 1.5, 0.75}, gx[4] = {0};
  __enzyme_autodiff((void *)g, enzyme_dup, x, gx, enzyme_dup, &w, &sw);
  int bad = 0;
  for (int i = 0; i < 4; i++) {
    double want = 2 * x[i] * (i + 1);
    double e[4] = {0}; e[i] = 1;
    for (int k = 0; k < 4; k++) sb[k] = 0;
    double t = __enzyme_fwddiff((void *)g, enzyme_dup, x, e, enzyme_dup, &w, &sw);
    if (fabs(gx[i] - want) > 1e-12 || fabs(t - want) > 1e-12) { printf("MISMATCH %d %g %g %g\n", i, gx[i], t, want); bad++; }
  }
  printf("%s\n", bad ? "FAIL" : "ok");
  return bad;
}
"""


@pytest.mark.parametrize("level", sorted(LEVELS))
def test_workspace_passed_with_a_shadow(tmp_path, level):
    # the fix the message names: the workspace struct as enzyme_dup, with a shadow workspace
    r, exe = build(tmp_path, FD_HEAD + WS + SHADOWED, level)
    assert r.returncode == 0, r.stderr
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stdout


DECLARED = r"""
__attribute__((noinline)) void fill(double *out, const double *in, int n) {
  for (int i = 0; i < n; i++) out[i] = in[i] * in[i];
}
double g(const double *x, double *scratch) {
  fill(scratch, x, 4);
  double s = 0;
  for (int i = 0; i < 4; i++) s += scratch[i] * (i + 1);
  return s;
}
int main(void) {
  double x[4] = {1, 2, 3, 4}, gx[4] = {0}, s[4];
  __enzyme_autodiff((void *)g, enzyme_dup, x, gx, enzyme_const, s);
  printf("%g\n", gx[1]);
  return 0;
}
"""


@pytest.mark.parametrize("level", ["O2", "adbefore"])
def test_declared_constant_memory_written_by_a_callee_warns(tmp_path, level):
    # the user passed the scratch buffer itself as enzyme_const: its derivative is dropped, as
    # for a store written in g, and the warning says so (it was silent through a call). At -O0
    # clang marks every function noinline, the user's mark cannot be told apart, and the stage
    # inlines fill: its store and g's load then meet, and the gradient is kept.
    r, exe = build(tmp_path, FD_HEAD + DECLARED, level)
    assert r.returncode == 0, r.stderr
    assert "stores an active value (through @fill) into the memory of its argument 2, passed as " \
           "enzyme_const, and reads floats back from it" in r.stderr
