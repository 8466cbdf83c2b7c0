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


AUGMENT_STRUCTS = r"""
#include <stdio.h>
extern int enzyme_dup;
double square(double x) { return x * x; }
float cube(float x) { return x * x * x; }
typedef struct { void *tape; double x; } TapeFirst;    /* Enzyme's documented order */
typedef struct { double x; void *tape; } PrimalFirst;  /* the order some programs declare */
typedef struct { float x; void *tape; } FloatFirst;
TapeFirst __enzyme_augmentfwd(void *, double);
PrimalFirst __enzyme_augmentfwd_primal_first(void *, double);
FloatFirst __enzyme_augmentfwd_float_first(void *, float);
double __enzyme_reverse(void *, double, double, void *);
float __enzyme_reverse_f(void *, float, float, void *);
int main(void) {
  TapeFirst a = __enzyme_augmentfwd((void *)square, 5.0);
  double ga = __enzyme_reverse((void *)square, 5.0, 1.0, a.tape);
  PrimalFirst b = __enzyme_augmentfwd_primal_first((void *)square, 3.0);
  double gb = __enzyme_reverse((void *)square, 3.0, 1.0, b.tape);
  FloatFirst c = __enzyme_augmentfwd_float_first((void *)cube, 2.0f);
  float gc = __enzyme_reverse_f((void *)cube, 2.0f, 1.0f, c.tape);
  printf("%g %g %g %g %g %g\n", a.x, ga, b.x, gb, (double)c.x, (double)gc);
  return 0;
}
"""


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_augmentfwd_struct_is_filled_by_type(tmp_path, opt):
    """__enzyme_augmentfwd declared as returning { primal, tape } gets the tape in the pointer
    field, as { tape, primal } does (filled by position, the tape pointer landed in the double
    and __enzyme_reverse crashed on the bits of the primal)."""
    (tmp_path / "s.c").write_text(AUGMENT_STRUCTS)
    done = subprocess.run([ENZYME_BUILD, "cc", opt, "s.c", "-o", "s"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    run = subprocess.run([str(tmp_path / "s")], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert [float(v) for v in run.stdout.split()] == [25.0, 10.0, 9.0, 6.0, 8.0, 12.0]


CONST_STATE = r"""
#include <stdio.h>
#include <enzyme/enzyme.h>
__attribute__((noinline)) void step(const double *w, double *state) { state[0] = state[0] * w[0] + 1.0; }
__attribute__((noinline)) void record(const double *w, double *log) { log[0] = w[0] * w[0]; }
double f(const double *w, double *state) { step(w, state); step(w, state); return state[0]; }
double g(const double *w, double *log) { record(w, log); return w[0] * 3.0; }
int main(void) {
  double w = 2.0, dw = 0.0, state = 0.5, dstate = 0.0, log = 0.0;
  __enzyme_autodiff((void *)f, enzyme_dup, &w, &dw, enzyme_const, &state);
  double dropped = dw;
  dw = 0.0; state = 0.5;
  __enzyme_autodiff((void *)f, enzyme_dup, &w, &dw, enzyme_dup, &state, &dstate);
  double kept = dw;
  dw = 0.0;
  __enzyme_autodiff((void *)g, enzyme_dup, &w, &dw, enzyme_const, &log);
  printf("%g %g %g\n", dropped, kept, dw);
  return 0;
}
"""


def test_active_state_in_const_memory_is_a_warning(tmp_path):
    """Active values written into memory passed as enzyme_const and read back (a recurrent
    state buffer): the derivative through that memory is dropped, as in Enzyme, and since
    whether the store and the load meet in one function depends on inlining (-O0 kept it),
    the build says so. Memory only written (a log) gets no warning."""
    (tmp_path / "c.c").write_text(CONST_STATE)
    done = subprocess.run([ENZYME_BUILD, "cc", "-O2", "c.c", "-o", "c"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "warning:" in line]
    assert warnings and all("passed as enzyme_const" in w and "argument 2" in w and "enzyme_dup" in w
                            for w in warnings), done.stderr
    assert any("@step" in w for w in warnings) and not any("@record" in w or "@g " in w for w in warnings)
    run = subprocess.run([str(tmp_path / "c")], capture_output=True, text=True, timeout=60)
    assert run.stdout.split() == ["0", "3", "3"]
