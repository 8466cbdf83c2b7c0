"""enzyme/enzyme.h: shipped copy matches the template; usable from C and C++."""
from __future__ import annotations

import os

import pytest

from enzyme_build.frontend.driver import INCLUDE_DIR

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_package_header_matches_template():
    with open(os.path.join(REPO, "templates", "enzyme.h")) as a, \
            open(os.path.join(INCLUDE_DIR, "enzyme", "enzyme.h")) as b:
        assert a.read() == b.read()


USER = """#include <enzyme/enzyme.h>
double sq(double x) { return x * x; }
double sq_fwd(double x, double dx) { return 2 * x * dx; }
double noisy(double x) { return x; }
ENZYME_REGISTER_DERIVATIVE(sq, sq_fwd);
ENZYME_INACTIVE(noisy);
ENZYME_FUNCTION_LIKE(noisy, "log1p");
int markers(void) { return enzyme_dup + enzyme_dupnoneed + enzyme_out + enzyme_const
                    + enzyme_width + enzyme_allocated + enzyme_tape; }
"""


@pytest.mark.parametrize("name,cxx", [("u.c", False), ("u.cc", True)])
def test_header_compiles_cleanly_and_registrations_are_globals(ws, name, cxx):
    ws.write(name, USER)
    std = "-std=c++17" if cxx else "-std=c11"
    ws.eb(std, "-Wall", "-Wextra", "-Werror", "-c", name, "-o", "u.o", cxx=cxx, check=True)
    symbols = ws.run(["nm", "u.o"], check=True).stdout
    for wanted in ("__enzyme_register_derivative_sq", "__enzyme_inactivefn_noisy",
                   "__enzyme_function_like_noisy"):
        assert f" D {wanted}\n" in symbols
    assert " U enzyme_dup\n" in symbols
