"""Constant pointers kept in a context struct beside active ones, the struct handed to a
function the optimizer does not inline.

The class: C's context/parameter structs (`struct Ctx {const double *mass; double *pos;
double *vel; int n;}`) and C++ objects holding a pointer to constant data next to their
state, passed by address to `noinline` helpers, methods, initializers, or through two
levels of calls. The constant pointer (an `enzyme_const` argument) has no shadow, so the
shadow struct has nothing right to hold in its place: in reverse mode such programs were
refused ("has no shadow ... stored into memory that holds differentiated data"), and in
forward mode the primal pointer was stored as its own shadow, so the callee read the
constant data as its tangent -- a silently wrong derivative. Now the refusal names the
functions whose inlining brings the struct and its readers into one function
(diagnostics.ResolvedByInlining); the AD stage inlines them before AD and differentiates
again, and SROA makes the struct's fields plain values. Where inlining cannot help (the
struct on the heap, a recursive callee) both modes refuse with the message.

Each program is checked in reverse and forward mode against central differences at -O0,
-O2 and with AD before optimization.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ad_helpers import FD_HEAD, LEVELS, check_fd_rows

HEAD = FD_HEAD   # stdio, stdlib, string, math and the AD entry points

# f(m, idx, x): m (4 doubles) and idx (4 ints) are enzyme_const; x (4 doubles) is active and
# may be updated in place, so every evaluation starts from a fresh copy
MAIN = r"""
int main(void) {
  const double m[4] = {1.0, 1.5, 0.75, 2.0};
  const int idx[4] = {2, 0, 3, 1};
  const double x0[4] = {0.5, -1.25, 1.5, 0.75};
  double x[4], g[4] = {0};
  memcpy(x, x0, sizeof x);
  __enzyme_autodiff((void *)f, enzyme_const, m, enzyme_const, idx, enzyme_dup, x, g);
  for (int i = 0; i < 4; i++) {
    double e[4] = {0}, xp[4], xm[4];
    e[i] = 1;
    memcpy(x, x0, sizeof x);
    double t = __enzyme_fwddiff((void *)f, enzyme_const, m, enzyme_const, idx, enzyme_dup, x, e);
    memcpy(xp, x0, sizeof x); memcpy(xm, x0, sizeof x);
    xp[i] += 1e-6; xm[i] -= 1e-6;
    double fp = f(m, idx, xp), fm = f(m, idx, xm);
    printf("%.15g %.15g %.15g\n", g[i], t, (fp - fm) / 2e-6);
  }
  return 0;
}
"""

STEP = r"""
__attribute__((noinline)) static void step(struct Ctx *c) {
  for (int i = 0; i < c->n; i++) {
    double a = 0;
    for (int j = 0; j < c->n; j++)
      if (j != i) { double d = c->pos[j] - c->pos[i]; a += c->mass[j] * d / (fabs(d) * d * d + 0.5); }
    c->vel[i] += c->dt * a;
  }
  for (int i = 0; i < c->n; i++) c->pos[i] += c->dt * c->vel[i];
}
"""

PROGRAMS = {
    # the struct filled in place and handed to a noinline step every iteration
    "stack_context": r"""
struct Ctx { const double *mass; double *pos; double *vel; int n; double dt; };
""" + STEP + r"""
double f(const double *m, const int *idx, double *x) {
  double vel[4] = {0.1, 0.0, -0.1, 0.2};
  struct Ctx c = {m, x, vel, 4, 0.05};
  for (int s = 0; s < 6; s++) step(&c);
  double e = 0;
  for (int i = 0; i < 4; i++) e += x[i] * x[i] + vel[i] * m[i];
  return e;
}
""",
    # an initializer stores the fields (into its parameter: the struct is its caller's)
    "initializer": r"""
struct Ctx { const double *mass; double *pos; double *vel; int n; double dt; };
__attribute__((noinline)) static void init(struct Ctx *c, const double *mass, double *pos, double *vel) {
  c->mass = mass; c->pos = pos; c->vel = vel; c->n = 4; c->dt = 0.05;
}
""" + STEP + r"""
double f(const double *m, const int *idx, double *x) {
  double vel[4] = {0};
  struct Ctx c;
  init(&c, m, x, vel);
  for (int s = 0; s < 5; s++) step(&c);
  return x[0] * x[1] + vel[2] * vel[3] + sin(x[3]);
}
""",
    # two levels: advance() runs the steps, each a call of step()
    "two_levels": r"""
struct Ctx { const double *mass; double *pos; double *vel; int n; double dt; };
""" + STEP + r"""
__attribute__((noinline)) static void advance(struct Ctx *c, int steps) {
  for (int s = 0; s < steps; s++) step(c);
}
double f(const double *m, const int *idx, double *x) {
  double vel[4] = {0.2, -0.1, 0.0, 0.1};
  struct Ctx c = {m, x, vel, 4, 0.04};
  advance(&c, 7);
  double e = 0;
  for (int i = 0; i < 4; i++) e += cos(x[i]) * m[i];
  return e;
}
""",
    # a gather through a constant index array and constant weights (a sparse row's shape)
    "index_array": r"""
struct Gather { const int *col; const double *w; const double *in; double *out; int n; };
__attribute__((noinline)) static void gather(const struct Gather *g) {
  for (int i = 0; i < g->n; i++) g->out[i] = g->w[i] * g->in[g->col[i]] * g->in[i];
}
double f(const double *m, const int *idx, double *x) {
  double y[4];
  struct Gather g = {idx, m, x, y, 4};
  gather(&g);
  return y[0] + y[1] * y[2] + exp(0.3 * y[3]);
}
""",
}

CXX_PROGRAMS = {
    # a C++ model object: a pointer to constant data beside its parameters, a noinline method
    "model_method": r"""
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>
extern int enzyme_dup, enzyme_const;
extern "C" void __enzyme_autodiff(void *, ...);
extern "C" double __enzyme_fwddiff(void *, ...);
struct Model {
  const double *data; const int *order; double *theta; int n;
  __attribute__((noinline)) double loss() const {
    double s = 0;
    for (int i = 0; i < n; i++) {
      double r = theta[0] * std::exp(-theta[1] * data[i]) + theta[2] * data[order[i]] - theta[3];
      s += r * r;
    }
    return s;
  }
};
double f(const double *m, const int *idx, double *x) {
  Model model{m, idx, x, 4};
  return model.loss() + 0.1 * x[1] * x[2];
}
""",
}

# the struct on the heap: nothing to inline brings it into one function with its readers
REFUSED = r"""
struct Ctx { const double *mass; double *pos; double *vel; int n; double dt; };
""" + STEP + r"""
double f(const double *m, const int *idx, double *x) {
  double vel[4] = {0};
  struct Ctx *c = malloc(sizeof *c);
  c->mass = m; c->pos = x; c->vel = vel; c->n = 4; c->dt = 0.05;
  for (int s = 0; s < 5; s++) step(c);
  free(c);
  return x[0] * x[1] + vel[2];
}
"""


def _build(tmp_path, source: str, level: str, cxx: bool = False) -> subprocess.CompletedProcess:
    flags, env = LEVELS[level]
    src = os.path.join(str(tmp_path), "p.cc" if cxx else "p.c")
    exe = os.path.join(str(tmp_path), "p")
    with open(src, "w") as fh:
        fh.write(source)
    cli = os.path.join(os.path.dirname(sys.executable), "enzyme-build")
    return subprocess.run([cli, "c++" if cxx else "cc", *flags, src, "-o", exe, "-lm"], capture_output=True,
                          text=True, timeout=600, env={**os.environ, **env})


def _rows(tmp_path, source: str, level: str, cxx: bool = False) -> list[list[float]]:
    r = _build(tmp_path, source, level, cxx)
    assert r.returncode == 0, r.stderr
    out = subprocess.run([os.path.join(str(tmp_path), "p")], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return [[float(v) for v in line.split()] for line in out.stdout.splitlines()]


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_context_struct(name, level, tmp_path):
    check_fd_rows(_rows(tmp_path, HEAD + PROGRAMS[name] + MAIN, level), 4)


@pytest.mark.parametrize("level", sorted(LEVELS))
def test_cxx_model_object(level, tmp_path):
    main = MAIN.replace("printf(", "std::printf(")
    check_fd_rows(_rows(tmp_path, CXX_PROGRAMS["model_method"] + main, level, cxx=True), 4)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_heap_context_refused(mode, tmp_path):
    # the forward mode used to store the primal pointer as its own shadow: a wrong tangent
    main = MAIN
    if mode == "forward":
        main = main.replace("  __enzyme_autodiff((void *)f, enzyme_const, m, enzyme_const, idx, enzyme_dup, x, g);\n", "")
    else:
        main = main.replace("__enzyme_fwddiff((void *)f, enzyme_const, m, enzyme_const, idx, enzyme_dup, x, e)", "0")
    r = _build(tmp_path, HEAD + REFUSED + main, "O2")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "has no shadow" in r.stderr and "stored" in r.stderr and "fix:" in r.stderr, r.stderr
    assert not os.path.exists(os.path.join(str(tmp_path), "p"))
