"""Local arrays of pointers initialized from a constant table of addresses of written globals.

The class: `double *rows[3] = {M[0], M[1], M[2]}` (or `{A, B}`, or a struct `{M, 4}`) where
`M` is a static float array the function writes. clang keeps the initializer as a constant
table and memcpys it into the local array. The table had no shadow, so the local array's
shadow pointers were zero: the gradient was zero with AD before optimization and the
program crashed at -O1. The table now gets a shadow global mirroring its initializer with
the shadow globals' addresses (analysis/activity.py: _pointer_tables_into; ad/shadowinit.py).
Each program is checked in reverse and forward mode against central differences.
"""
from __future__ import annotations

import pytest

from ad_helpers import FD_HEAD, LEVELS, check_fd_rows, fd_main, fd_rows

PROGRAMS = {
    "matrix_rows": r"""
static double M[3][4];
double f(const double *x) {
  double *rows[3] = {M[0], M[1], M[2]};
  for (int r = 0; r < 3; r++) for (int c = 0; c < 4; c++) M[r][c] = x[c] * (r + 1) + x[(c + r) % 4];
  double *t = rows[0]; rows[0] = rows[2]; rows[2] = t;
  double s = 0; for (int r = 0; r < 3; r++) for (int c = 0; c < 4; c++) s += rows[r][c] * (r + 1) * (c + 1) * rows[(r + 1) % 3][c];
  return s;
}
""",
    "two_buffers": r"""
static double A[4], B[4];
double f(const double *x) {
  double *bufs[2] = {A, B};
  for (int i = 0; i < 4; i++) bufs[0][i] = x[i];
  for (int s = 0; s < 3; s++) { for (int i = 0; i < 4; i++) bufs[1][i] = bufs[0][i] * 0.8 + 0.1 * sin(bufs[0][(i + 1) % 4]); double *t = bufs[0]; bufs[0] = bufs[1]; bufs[1] = t; }
  return bufs[0][0] * bufs[0][1] + bufs[0][2] * bufs[0][3];
}
""",
    "view_struct": r"""
static double D[6];
struct view { double *p; int n; double *q; };
__attribute__((noinline)) static double norm2(const struct view *v) { double s = 0; for (int i = 0; i < v->n; i++) s += v->p[i] * v->q[i]; return s; }
double f(const double *x) {
  struct view v = {D, 3, D + 3};
  for (int i = 0; i < 6; i++) D[i] = x[i % 4] * (i + 1);
  return norm2(&v) + v.p[0] * x[1];
}
""",
}


@pytest.mark.parametrize("level", ["O0", "O1", "O2", "adbefore"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_pointer_tables_into_written_globals(name, level, tmp_path):
    flags, env = LEVELS[level] if level in LEVELS else (["-O1"], {})
    check_fd_rows(fd_rows(tmp_path, FD_HEAD + PROGRAMS[name] + fd_main(4), flags, env), 4)
