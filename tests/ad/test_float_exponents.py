"""Exponents read from a float's bits, used only as integers.

The class: `memcpy(&u, &x, 8)` (or a union) and `(u >> 52) & 0x7ff` to get a double's
exponent, which then picks a power-of-two scale (`ldexp(1.0, -e)`, `scalbn(x, -e)`,
`__builtin_powi(2.0, e)`), an index or a branch. The scale is a step function of x, so the
path through the exponent carries no derivative, and reverse and forward mode are right to
ignore it; the engine refused every such program ("the bits of an active float travel as an
integer ('lshr' ...)", with a hint about small structs in registers that did not apply). An
integer that only reaches comparisons, indices and the exponent operand of ldexp, scalbn or
powi now stays an integer; bits rebuilt into a float (a mantissa) are still refused, with a
hint that names frexp. Checked in reverse and forward mode against central differences (away
from powers of two) at -O0 and -O2; with AD before optimization the exponent is read in a
helper of its own and returned, which stays refused.
"""
from __future__ import annotations

import pytest

from ad_helpers import FD_HEAD, LEVELS, check_fd_rows, fd_main, fd_rows, right_or_refused

EXPONENT = r"""
static int exponent_of(double x) { uint64_t u; memcpy(&u, &x, 8); return (int)((u >> 52) & 0x7ff) - 1023; }
"""

PROGRAMS = {
    # a power-of-two scale from the exponent
    "ldexp_scale": EXPONENT + r"""
double f(const double *x) {
  double s = 0;
  for (int i = 0; i < 4; i++) s += x[i] * x[(i + 1) % 4] * ldexp(1.0, -exponent_of(x[i]));
  return s;
}
""",
    # a mantissa in [1, 2) by scalbn, its derivative kept through the float operand
    "scalbn_mantissa": EXPONENT + r"""
double f(const double *x) {
  double s = 0;
  for (int i = 0; i < 4; i++) { double m = scalbn(fabs(x[i]), -exponent_of(x[i])); s += m * m + sin(x[i]) * m; }
  return s;
}
""",
    # the exponent as a branch and an index into a table, a powi of it
    "exponent_index": EXPONENT + r"""
static const double weights[8] = {0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.25};
double f(const double *x) {
  double s = 0;
  for (int i = 0; i < 4; i++) {
    int e = exponent_of(x[i]);
    s += weights[(e + 4) & 7] * x[i] * x[i] + (e > 0 ? cos(x[i]) : x[i]) * __builtin_powi(2.0, e);
  }
  return s;
}
""",
}

# a mantissa rebuilt from the bits is a float again: its derivative would be lost
REBUILT = EXPONENT + r"""
double f(const double *x) {
  double s = 0;
  for (int i = 0; i < 4; i++) {
    uint64_t u;
    memcpy(&u, &x[i], 8);
    u = (u & 0x000fffffffffffffull) | 0x3ff0000000000000ull;
    double m;
    memcpy(&m, &u, 8);
    s += m * x[i];
  }
  return s;
}
"""

X = (0.6, -1.3, 1.7, 0.8)


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_float_exponents(name, level, tmp_path):
    flags, env = LEVELS[level]
    text = FD_HEAD + PROGRAMS[name] + fd_main(x=X)
    if level == "adbefore":
        # the helper returns the exponent: its caller could rebuild a float from it
        stderr = right_or_refused(tmp_path, text, flags, env)
        assert stderr is None or ("travel as an integer" in stderr and "frexp" in stderr), stderr
        return
    check_fd_rows(fd_rows(tmp_path, text, flags, env), 4)


@pytest.mark.parametrize("level", ["O0", "O2"])
def test_rebuilt_mantissa_refused(level, tmp_path):
    flags, env = LEVELS[level]
    stderr = right_or_refused(tmp_path, FD_HEAD + REBUILT + fd_main(x=X), flags, env)
    assert stderr is not None and "travel as an integer" in stderr, stderr
