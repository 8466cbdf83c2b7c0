"""Forward mode through a function taking a struct by value in memory (`byval`).

The class: a struct larger than two registers passed by value to a function that stays a
call (noinline, or too big to inline). fwddiffe_<f> declares the struct and its shadows
`byval`, but the call passed them as plain pointers, so the callee read its copies from
where the caller never put them: tangents silently wrong at -O1 and up and with AD before
optimization, while reverse mode was right. Each program is checked in forward and
reverse mode against central differences.
"""
from __future__ import annotations

import pytest

from ad_helpers import LEVELS, check_fd_rows, check_program_gradient, fd_main, fd_rows, FD_HEAD

PROGRAMS = {
    # a layer {weight, source pointer, count, bias}, copied and changed, run twice
    "layer_record": r"""
typedef struct { double w; const double *src; int n; double bias; } layer;
__attribute__((noinline)) static double run(layer l) { double s = l.bias; for (int i = 0; i < l.n; i++) s += l.w * l.src[i]; return s; }
double f(const double *x) { layer a = {x[0], x, 4, x[1]}; layer b = a; b.w = x[2] * x[3]; b.n = 2; return run(a) * run(b); }
""",
    # five doubles by value
    "five_doubles": r"""
typedef struct { double a, b, c, d, e; } five;
__attribute__((noinline)) static double poly(five p, double t) { return p.a + t * (p.b + t * (p.c + t * (p.d + t * p.e))); }
double f(const double *x) { five p = {x[0], x[1], sin(x[2]), x[3] * x[0], 0.5}; return poly(p, x[3]) + poly(p, 0.3); }
""",
    # an array inside the struct, and an integer
    "array_member": r"""
typedef struct { int n; double c[6]; } coeffs;
__attribute__((noinline)) static double dotc(coeffs k, const double *v) { double s = 0; for (int i = 0; i < k.n; i++) s += k.c[i] * v[i % 4]; return s; }
double f(const double *x) { coeffs k = {6, {x[0], x[1], x[2], x[3], x[0] * x[1], 1.0}}; return dotc(k, x) * x[2]; }
""",
}


@pytest.mark.parametrize("level", sorted(LEVELS) + ["O1"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_structs_by_value_in_forward_mode(name, level, tmp_path):
    if level == "O1":
        check_fd_rows(fd_rows(tmp_path, FD_HEAD + PROGRAMS[name] + fd_main(4), ["-O1"]), 4)
    else:
        check_program_gradient(tmp_path, PROGRAMS[name], level)
