"""Inline assembly: a program containing it builds (LLVM's asm parser is initialized where we
emit code); assembly on active data in differentiated code is a clear error with its line."""
from __future__ import annotations

import subprocess

import pytest

from test_failure_handling import ENZYME_BUILD

ASM_ELSEWHERE = """\
#include <stdio.h>
#include <enzyme/enzyme.h>
static unsigned long ticks(void) { unsigned lo, hi; __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi)); return lo; }
double f(double x) { return x * x; }
int main(void) {
    __asm__ volatile("nop");
    unsigned long t = ticks();
    printf("%g %d\\n", __enzyme_autodiff((void *)f, 3.0), t != 0 || t == 0);
    return 0;
}
"""
ASM_ON_ACTIVE_DATA = """\
#include <stdio.h>
#include <enzyme/enzyme.h>
double f(double x) {
    double y;
    __asm__("movsd %1, %0" : "=x"(y) : "x"(x));
    return x * y;
}
int main(void) { printf("%g\\n", __enzyme_autodiff((void *)f, 3.0)); return 0; }
"""


@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_program_with_inline_asm_builds(tmp_path, level):
    (tmp_path / "p.c").write_text(ASM_ELSEWHERE)
    done = subprocess.run([ENZYME_BUILD, "cc", level, "p.c", "-o", "p"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert subprocess.run([str(tmp_path / "p")], capture_output=True, text=True).stdout == "6 1\n"


def test_inline_asm_on_active_data_is_named_with_its_line(tmp_path):
    (tmp_path / "q.c").write_text(ASM_ON_ACTIVE_DATA)
    done = subprocess.run([ENZYME_BUILD, "cc", "-O2", "-g", "q.c", "-o", "q"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and "LLVM ERROR" not in done.stderr
    assert "q.c:5" in done.stderr and "inline assembly" in done.stderr, done.stderr
