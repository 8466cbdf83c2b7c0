"""Reverse mode through pointers that are a phi of written global arrays.

The class: a pointer that is one global array or another, chosen by control flow, e.g.
`cur`/`nxt` swapped every step over two static buffers, or a buffer picked per iteration.
Once the optimizer turns the choice into a phi of the globals themselves, the reverse
sweep's shadow phi took the globals as their own shadows: the adjoints went into the
primal arrays and the gradient came out zero, silently (reverse mode at -O1; forward mode
was right). Each program is checked in reverse and forward mode against central
differences at -O0, -O1, -O2 and with AD before optimization (where a global pointer
variable holding one of them is refused).
"""
from __future__ import annotations

import pytest

from ad_helpers import FD_HEAD, LEVELS, check_fd_rows, fd_main, fd_rows, right_or_refused

PROGRAMS = {
    # two static buffers swapped by pointer every step (odd count: ends in B)
    "swapped_buffers": r"""
static double A[4], B[4], *cur = A, *nxt = B;
double f(const double *x) {
  cur = A; nxt = B;
  for (int i = 0; i < 4; i++) cur[i] = x[i];
  for (int s = 0; s < 3; s++) { for (int i = 0; i < 4; i++) nxt[i] = cur[i] + 0.1 * sin(cur[(i + 1) % 4]); double *t = cur; cur = nxt; nxt = t; }
  return cur[0] * cur[1] + cur[2] * cur[3];
}
""",
    # local pointers over two globals, swapped (no global pointer variables)
    "local_swap": r"""
static double U[4], V[4];
double f(const double *x) {
  double *a = U, *b = V;
  for (int i = 0; i < 4; i++) a[i] = x[i] * x[(i + 2) % 4];
  for (int s = 0; s < 5; s++) { for (int i = 0; i < 4; i++) b[i] = a[i] * 0.9 + 0.05 * a[(i + 3) % 4] * a[i]; double *t = a; a = b; b = t; }
  return a[0] + 2 * a[1] + 3 * a[2] + 4 * a[3];
}
""",
    # a buffer picked per iteration from a table of two globals
    "picked_buffer": r"""
static double P[4], Q[4];
double f(const double *x) {
  for (int i = 0; i < 4; i++) { P[i] = x[i]; Q[i] = x[3 - i] * 2; }
  double s = 0;
  for (int k = 0; k < 6; k++) { double *b = (k % 3 == 1) ? Q : P; for (int i = 0; i < 4; i++) { s += b[i] * cos(s * 0.1); b[i] *= 0.5; } }
  return s;
}
""",
}


@pytest.mark.parametrize("level", ["O0", "O1", "O2", "adbefore"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_phis_of_global_arrays(name, level, tmp_path):
    flags, env = LEVELS[level] if level in LEVELS else (["-O1"], {})
    text = FD_HEAD + PROGRAMS[name] + fd_main(4)
    if level == "adbefore":
        right_or_refused(tmp_path, text, flags, env)   # right, or a clean refusal (it checks which)
        return
    check_fd_rows(fd_rows(tmp_path, text, flags, env), 4)
