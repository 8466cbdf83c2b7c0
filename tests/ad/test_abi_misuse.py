"""Misusing Enzyme's C ABI is a compile-time error naming the call site, as in Enzyme:
extra arguments, a call with nothing to differentiate, a first argument that is not a
function, a caller-owned tape that is too small."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

ENZYME_BUILD = os.path.join(os.path.dirname(sys.executable), "enzyme-build")

CASES = {
    "too-many-arguments": ("""\
        #include <stdio.h>
        double __enzyme_autodiff(void *, ...);
        double f(double x) { return x * x; }
        int main(void) { printf("%g\\n", __enzyme_autodiff((void *)f, 1.5, 2.0, 3.0)); return 0; }
    """, "too many arguments in the call to __enzyme_autodiff for @f: it has 1 parameter"),
    "too-many-arguments-augmentfwd": ("""\
        extern int enzyme_dup;
        void *__enzyme_augmentfwd(void *, ...);
        void sq(double *x) { *x = *x * *x; }
        int main(void) { double x = 2, dx = 1, y = 0; return __enzyme_augmentfwd((void *)sq, enzyme_dup, &x, &dx, &y) != 0; }
    """, "too many arguments in the call to __enzyme_augmentfwd for @sq"),
    "nothing-to-differentiate": ("""\
        #include <stdio.h>
        int __enzyme_autodiff(void *, ...);
        int f(int x) { return x * x; }
        int main(void) { printf("%d\\n", __enzyme_autodiff((void *)f, 3)); return 0; }
    """, "has nothing to differentiate"),
    "not-a-function": ("""\
        #include <stdio.h>
        double __enzyme_autodiff(void *, ...);
        double x = 3.0;
        int main(void) { printf("%g\\n", __enzyme_autodiff((void *)&x, 2.0)); return 0; }
    """, "must be a function defined in the program"),
    "tape-too-small": ("""\
        #include <stdio.h>
        extern int enzyme_allocated, enzyme_tape, enzyme_const, enzyme_dup;
        void __enzyme_augmentfwd(void *, ...);
        void __enzyme_reverse(void *, ...);
        double f(double *x, int n) { double s = 0; for (int i = 0; i < n; i++) s += x[i] * x[i] * x[i]; *x = s; return s; }
        int main(void) {
            double x[4] = {1, 2, 3, 4}, dx[4] = {1, 0, 0, 0}; char tape[1];
            __enzyme_augmentfwd((void *)f, enzyme_allocated, 1, enzyme_tape, tape, enzyme_dup, x, dx, enzyme_const, 4);
            __enzyme_reverse((void *)f, enzyme_allocated, 1, enzyme_tape, tape, enzyme_dup, x, dx, enzyme_const, 4, 1.0);
            printf("%g\\n", dx[0]); return 0;
        }
    """, "enzyme_allocated gives 1 bytes but the tape object needs"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_abi_misuse_is_a_compile_time_error(tmp_path, case):
    import textwrap
    source, message = CASES[case]
    (tmp_path / "m.c").write_text(textwrap.dedent(source))
    done = subprocess.run([ENZYME_BUILD, "cc", "-O2", "-g", "m.c", "-o", "m"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    assert message in done.stderr, done.stderr
    assert "m.c:" in done.stderr  # the call site, from debug info
    assert not (tmp_path / "m").exists()


def test_a_void_function_with_no_active_argument_is_still_accepted(tmp_path):
    """Side effects on active globals are a reason to differentiate a void(int) function."""
    (tmp_path / "v.c").write_text(
        "void __enzyme_autodiff(void *, ...);\nint calls;\nvoid f(int n) { calls += n; }\n"
        "int main(void) { __enzyme_autodiff((void *)f, 3); return calls == 3 ? 0 : 1; }\n")
    done = subprocess.run([ENZYME_BUILD, "cc", "-O2", "v.c", "-o", "v"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert subprocess.run([str(tmp_path / "v")]).returncode == 0
