"""Constant tables reached through memory that carries derivatives.

A `static const double` table is inactive: derived code reads it as the primal does and
gives it no shadow. When its address is stored into memory that has a shadow (a struct of
pointers `{int n; const double *coef; double *x;}` handed to a function the optimizer did not
inline, an array of row pointers into a 2-D table), the derived code reaches the table
through the struct's shadow, and the engine refused: "a pointer to memory without a shadow
(@W) is stored into active memory". Such tables now get a shadow global: a zero block that
only the reverse sweep's accumulations write, cleared after each call like any shadow
global's, so the table still carries no derivative (forward mode reads zero tangents from
it). Tables only read, at constant or computed indexes, keep none (`_escaping_float_constants`
in analysis/activity.py).

Members: a struct holding a table pointer passed to a noinline consumer, the same struct
filled by a helper that is not inlined, one of two tables chosen by the input, rows of a 2-D
table stored into an array of structs, a table pointer returned by a noinline selector, a constant
struct holding a table pointer, a C++ model object with a `const double *coef` member, and
the struct case called repeatedly in reverse, forward, split and width-4 forward mode with the
table also read directly. Each at -O0, -O2 and with AD before optimization.
"""
from __future__ import annotations

import math
import os
import subprocess

import pytest

from enzyme_build.analysis.activity import written_float_globals
from enzyme_build.ir.model import parse_module
from ad_helpers import (CXX_FD_HEAD, CXX_FD_MAIN, LEVELS, check_fd_rows, check_program_gradient,
                        enzyme_build_cli, fd_rows, run_program)

# a struct of pointers whose `w` is a constant table, read by a consumer that is not inlined;
# `f` returns `energy(&s)` plus what `table_struct` is given
SYS_ENERGY = r"""
struct sys { int n; const double *w; double *x; };
__attribute__((noinline)) static double energy(const struct sys *s) {
  double e = 0;
  for (int i = 0; i < s->n; i++) e += s->w[i] * s->x[i] * s->x[i];
  return e;
}
static const double W[4] = {1.0, 2.0, 0.5, 3.0};
"""
TABLE_STRUCT = SYS_ENERGY + r"""double f(const double *x) {
  double buf[4];
  for (int i = 0; i < 4; i++) buf[i] = sin(x[i]);
  struct sys s = {4, W, buf};
  return energy(&s)%s;
}
"""


def table_struct(extra: str = "") -> str:
    return TABLE_STRUCT % extra


PROGRAMS = {
    "struct_field_noinline": table_struct(),
    "rows_of_a_table": r"""
static const double T[3][4] = {{1, 2, 3, 4}, {0.5, -1, 2, 0.25}, {3, 1, -2, 1}};
struct row { const double *c; double *out; };
__attribute__((noinline)) static void apply(struct row *r, int m, const double *x) {
  for (int k = 0; k < m; k++) { double s = 0; for (int i = 0; i < 4; i++) s += r[k].c[i] * x[i]; *r[k].out = sin(s); }
}
double f(const double *x) {
  double o[3];
  struct row r[3];
  for (int k = 0; k < 3; k++) { r[k].c = T[k]; r[k].out = &o[k]; }
  apply(r, 3, x);
  return o[0] * o[1] + o[2];
}
""",
    "returned_table": r"""
static const double A[4] = {1.0, 2.0, 0.5, 3.0}, B[4] = {-1.0, 0.25, 4.0, 1.5};
__attribute__((noinline)) static const double *coeffs(int k) { return k ? A : B; }
double f(const double *x) {
  const double *c = coeffs(x[0] > 0), *d = coeffs(x[1] > 0);
  double s = 0;
  for (int i = 0; i < 4; i++) s += c[i] * sin(x[i]) + d[i] * x[i] * x[(i + 1) % 4];
  return s;
}
""",
    # the struct filled by a helper that is not inlined (with AD before optimization)
    "filled_by_a_helper": SYS_ENERGY + r"""
__attribute__((noinline)) static void init(struct sys *s, const double *w, double *x) { s->n = 4; s->w = w; s->x = x; }
double f(const double *x) {
  double buf[4];
  for (int i = 0; i < 4; i++) buf[i] = sin(x[i]);
  struct sys s;
  init(&s, W, buf);
  return energy(&s);
}
""",
    # one of two tables, chosen by the input
    "selected_table": r"""
struct sys { int n; const double *w; double *x; };
__attribute__((noinline)) static double energy(const struct sys *s) {
  double e = 0;
  for (int i = 0; i < s->n; i++) e += s->w[i] * s->x[i] * s->x[i];
  return e;
}
static const double A[4] = {1.0, 2.0, 0.5, 3.0}, B[4] = {-1.0, 0.25, 4.0, 1.5};
double f(const double *x) {
  double buf[4];
  for (int i = 0; i < 4; i++) buf[i] = sin(x[i]);
  struct sys s = {4, x[0] > 0 ? A : B, buf};
  return energy(&s);
}
""",
    "constant_struct": r"""
struct model { int n; const double *w; };
static const double W[4] = {1.0, 2.0, 0.5, 3.0};
static const struct model M = {4, W};
__attribute__((noinline)) static double energy(const struct model *m, const double *x) {
  double e = 0;
  for (int i = 0; i < m->n; i++) e += m->w[i] * x[i] * x[i];
  return e;
}
double f(const double *x) { return energy(&M, x) + sin(x[1]); }
""",
}


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_programs_with_constant_tables_get_the_right_gradient(name, level, tmp_path):
    check_program_gradient(tmp_path, PROGRAMS[name], level)


CXX_MODEL = r"""
struct Model {
  int n; const double *coef; double *state;
  double run() const { double s = 0; for (int i = 0; i < n; i++) s += coef[i] * state[i] * state[i]; return s; }
};
static const double C[4] = {1, 2, 3, 4};
__attribute__((noinline)) static double go(Model &m) { return m.run(); }
double f(const double *x) {
  double st[4];
  for (int i = 0; i < 4; i++) st[i] = std::tanh(x[i]);
  Model m{4, C, st};
  return go(m);
}
"""


@pytest.mark.parametrize("level", sorted(LEVELS))
def test_a_cxx_model_holding_a_constant_table(level, tmp_path):
    flags, env = LEVELS[level]
    check_fd_rows(fd_rows(tmp_path, CXX_FD_HEAD + CXX_MODEL + CXX_FD_MAIN, flags, env, cxx=True), 4)


def output_lines(tmp_path, source: str, level: str) -> list[str]:
    """Build a C program at one of LEVELS with the enzyme-build CLI, run it, return its lines."""
    flags, env = LEVELS[level]
    src, exe = tmp_path / "p.c", tmp_path / "p"
    src.write_text(source)
    r = subprocess.run([enzyme_build_cli(), "cc", *flags, str(src), "-o", str(exe), "-lm"],
                       capture_output=True, text=True, timeout=300, env={**os.environ, **env})
    assert r.returncode == 0, r.stderr
    out = run_program(str(exe))
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


REPEATED = r"""
#include <stdio.h>
#include <math.h>
extern int enzyme_dup;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
""" + table_struct(" + W[1] * x[0]") + r"""
int main(void) {
  double x[4] = {0.5, -1.25, 1.5, 0.75};
  for (int rep = 0; rep < 3; rep++) {
    double g[4] = {0};
    __enzyme_autodiff((void *)f, enzyme_dup, x, g);
    for (int i = 0; i < 4; i++) {
      double e[4] = {0};
      e[i] = 1;
      printf("%.17g %.17g\n", g[i], __enzyme_fwddiff((void *)f, enzyme_dup, x, e));
    }
  }
  printf("%.17g %.17g %.17g %.17g\n", W[0], W[1], W[2], W[3]);
  return 0;
}
"""


@pytest.mark.parametrize("level", sorted(LEVELS))
def test_repeated_calls_leave_no_adjoint_in_the_table(level, tmp_path):
    """The table's shadow is cleared after every call: the third gradient equals the first,
    forward mode between them sees zero tangents, and the table itself is unchanged."""
    lines = output_lines(tmp_path, REPEATED, level)
    w, x = [1.0, 2.0, 0.5, 3.0], [0.5, -1.25, 1.5, 0.75]
    want = [w[i] * math.sin(2 * x[i]) + (w[1] if i == 0 else 0.0) for i in range(4)]
    rows = [[float(v) for v in line.split()] for line in lines[:12]]
    for k, (rev, fwd) in enumerate(rows):
        assert rev == pytest.approx(want[k % 4], rel=1e-12), (k, rows)
        assert fwd == pytest.approx(want[k % 4], rel=1e-12), (k, rows)
    assert [float(v) for v in lines[12].split()] == w


SPLIT_AND_VECTOR = r"""
#include <stdio.h>
#include <math.h>
extern int enzyme_dup, enzyme_const, enzyme_width;
void __enzyme_autodiff(void *, ...);
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);
typedef struct { double d[4]; } v4;
v4 __enzyme_fwddiff(void *, ...);
""" + table_struct(" + W[2] * x[1]") + r"""
int main(void) {
  double x[4] = {0.5, -1.25, 1.5, 0.75};
  for (int rep = 0; rep < 2; rep++) {
    double gs[4] = {0};
    void *tape = __enzyme_augmentfwd((void *)f, enzyme_dup, x, gs);
    __enzyme_reverse((void *)f, enzyme_dup, x, gs, 1.0, tape);
    printf("SPL %.15g %.15g %.15g %.15g\n", gs[0], gs[1], gs[2], gs[3]);
    double e0[4] = {1,0,0,0}, e1[4] = {0,1,0,0}, e2[4] = {0,0,1,0}, e3[4] = {0,0,0,1};
    v4 t = __enzyme_fwddiff((void *)f, enzyme_width, 4, enzyme_dup, x, e0, e1, e2, e3);
    printf("VEC %.15g %.15g %.15g %.15g\n", t.d[0], t.d[1], t.d[2], t.d[3]);
  }
  double w[4] = {1.0, 2.0, 0.5, 3.0};
  printf("EXP");
  for (int i = 0; i < 4; i++) printf(" %.15g", w[i] * sin(2 * x[i]) + (i == 1 ? 0.5 : 0));
  printf("\n");
  return 0;
}
"""


@pytest.mark.parametrize("level", sorted(LEVELS))
def test_split_and_vector_modes_through_a_table_pointer(level, tmp_path):
    """Split mode (augmented forward, then reverse) twice, and width-4 forward mode, on the
    struct holding a table pointer: each line equals the closed form."""
    lines = output_lines(tmp_path, SPLIT_AND_VECTOR, level)
    expected = [float(v) for v in lines[-1].split()[1:]]
    assert len(lines) == 5 and [line.split()[0] for line in lines] == ["SPL", "VEC", "SPL", "VEC", "EXP"]
    for line in lines[:4]:
        assert [float(v) for v in line.split()[1:]] == pytest.approx(expected, rel=1e-12), lines


IR = """
@W = internal constant [4 x double] [double 1.0, double 2.0, double 0.5, double 3.0], align 16
@T = internal constant [2 x [2 x double]] [[2 x double] [double 1.0, double 2.0], [2 x double] [double 3.0, double 4.0]]
@R = internal constant [4 x double] [double 1.0, double 2.0, double 0.5, double 3.0], align 16
@P = internal constant [2 x double] [double 1.0, double 2.0]

define double @g(ptr %s, i64 %k) {
entry:
  store ptr @W, ptr %s, align 8
  %row = getelementptr inbounds [2 x [2 x double]], ptr @T, i64 0, i64 %k
  %first = getelementptr inbounds [2 x double], ptr %row, i64 0, i64 0
  %s1 = getelementptr inbounds i8, ptr %s, i64 8
  store ptr %first, ptr %s1, align 8
  %at = getelementptr inbounds [4 x double], ptr @R, i64 0, i64 %k
  %v = load double, ptr %at, align 8
  ret double %v
}

define ptr @h() {
entry:
  ret ptr @P
}

@S1 = internal constant [2 x double] [double 1.0, double 2.0]
@S2 = internal constant [2 x double] [double 3.0, double 4.0]
@H = internal constant [2 x double] [double 5.0, double 6.0]
@D = internal constant [2 x double] [double 7.0, double 8.0]

define void @pick(ptr %s, i1 %c) {
entry:
  %t = select i1 %c, ptr @S1, ptr @S2
  store ptr %t, ptr %s, align 8
  ret void
}

define void @keep(ptr %s, ptr %w) {
entry:
  %at = getelementptr inbounds i8, ptr %s, i64 8
  store ptr %w, ptr %at, align 8
  ret void
}

define double @dot(ptr %a, ptr %b) {
entry:
  %x = load double, ptr %a, align 8
  %y = load double, ptr %b, align 8
  %p = fmul double %x, %y
  ret double %p
}

define double @user(ptr %s, ptr %v) {
entry:
  call void @keep(ptr %s, ptr @H)
  %d = call double @dot(ptr @D, ptr %v)
  ret double %d
}
"""


def test_only_tables_whose_address_escapes_get_shadows():
    found = written_float_globals(parse_module(IR))
    # stored (directly, as a row of a 2-D table through two GEPs, through a select, by a
    # helper that stores its parameter) or returned; @R is only read, @D only passed to a
    # function that reads it
    assert found == {"@W": "[4 x double]", "@T": "[2 x [2 x double]]", "@P": "[2 x double]",
                     "@S1": "[2 x double]", "@S2": "[2 x double]", "@H": "[2 x double]"}
