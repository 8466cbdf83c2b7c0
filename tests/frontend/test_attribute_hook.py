"""The wrapper hands TUs with `__attribute__((enzyme(...)))` to frontend.attributes."""
from __future__ import annotations

import pytest
from frontend_helpers import has_bitcode

RULE = """#include <math.h>
typedef struct { double primal, tangent; } dual;
dual f_fwd(double x, double dx);
__attribute__((enzyme("forward", f_fwd))) double f(double x) { return sin(x); }
dual f_fwd(double x, double dx) { dual d = {sin(x), cos(x) * dx}; return d; }
"""


@pytest.mark.parametrize("flags", [[], ["-w"], ["-Werror"]])
def test_rule_global_reaches_the_object(ws, flags):
    ws.write("rule.c", RULE)
    proc = ws.eb(*flags, "-c", "rule.c", "-o", "rule.o", check=True)
    assert "unknown attribute" not in proc.stderr
    assert has_bitcode(ws.file("rule.o"))
    symbols = ws.run(["nm", "rule.o"], check=True).stdout
    assert "__enzyme_build_rule_forward_f" in symbols


def test_plain_tu_is_compiled_once(ws):
    ws.write("plain.c", "int enzyme = 3;\nint get(void) { return enzyme; }\n")
    proc = ws.eb("-c", "plain.c", env={"ENZYME_BUILD_VERBOSE": "1"}, check=True)
    assert proc.stderr.count("enzyme-build: ") == 1
