"""Every shape of custom rule Enzyme's convention accepts (enzyme_build/custom/convention.py),
in compiled programs checked against closed forms: augment returning a tape, a
{tape, primal} pair, the primal alone or nothing (then the gradient takes no tape), and
forward rules returning {primal, tangent} or the tangent alone.

Each rule multiplies the true derivative by 10, so a result that ignored the rule shows.
"""
from __future__ import annotations

import pytest

from custom_helpers import ENZYME_BUILD, run, write

HEAD = """\
#include <stdio.h>
#include <stdlib.h>
extern double __enzyme_autodiff(void *, ...);
extern double __enzyme_fwddiff(void *, ...);
extern void *__enzyme_augmentfwd(void *, ...);
extern double __enzyme_reverse(void *, ...);
__attribute__((noinline)) double sq(double x) { return x * x; }
double outer(double x) { return 3 * sq(x) + x; }          /* rule used inside a derivative */
"""

MAIN = """
int main(void) {
  printf("%.17g %.17g\\n", __enzyme_autodiff((void *)sq, 1.5), __enzyme_autodiff((void *)outer, 1.5));
  void *tape = __enzyme_augmentfwd((void *)outer, 1.5);
  printf("%.17g\\n", __enzyme_reverse((void *)outer, 1.5, 1.0, tape));
  return 0;
}
"""

# the rule's derivative of sq at 1.5: 10 * 2 * 1.5 = 30; outer: 3 * 30 + 1 = 91
EXPECTED = [30.0, 91.0, 91.0]

SHAPES = {
    "tape": """
void *sq_aug(double x) { return malloc(1); }
double sq_grad(double x, double dret, void *tape) { free(tape); return 10 * 2 * x * dret; }
""",
    "tape+primal": """
typedef struct { void *tape; double primal; } aug_t;
aug_t sq_aug(double x) { aug_t r = {0, x * x}; return r; }
double sq_grad(double x, double dret, void *tape) { return 10 * 2 * x * dret; }
""",
    "primal, gradient without tape": """
double sq_aug(double x) { return x * x; }
double sq_grad(double x, double dret) { return 10 * 2 * x * dret; }
""",
    "nothing, gradient without tape": """
void sq_aug(double x) { }
double sq_grad(double x, double dret) { return 10 * 2 * x * dret; }
""",
}


def build_and_run(work, source: str, *flags: str) -> list[float]:
    write(work, "prog.c", source)
    proc = run([ENZYME_BUILD, "cc", "-O2", *flags, "prog.c", "-o", "prog", "-lm"], work)
    assert proc.returncode == 0, proc.stderr
    proc = run([work / "prog"], work)
    assert proc.returncode == 0, proc.stderr
    return [float(v) for v in proc.stdout.split()]


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_gradient_rule_shapes_through_registration_global(work, shape):
    source = HEAD + SHAPES[shape] + \
        "void *__enzyme_register_gradient_sq[3] = {(void *)sq, (void *)sq_aug, (void *)sq_grad};\n" + MAIN
    assert build_and_run(work, source) == EXPECTED


@pytest.mark.parametrize("shape", ["primal, gradient without tape", "nothing, gradient without tape"])
def test_tapeless_gradient_rule_through_attributes_at_O0(work, shape):
    rule_first, _, rest = HEAD.partition("__attribute__((noinline)) double sq(double x)")
    source = rule_first + SHAPES[shape] + \
        '__attribute__((noinline, enzyme("augment", sq_aug), enzyme("gradient", sq_grad))) double sq(double x)' + \
        rest + MAIN
    assert build_and_run(work, source, "-O0") == EXPECTED


def test_tapeless_rules_of_a_function_writing_through_pointers(work):
    # void square(const double *x, double *y): augment and gradient take each pointer then its
    # shadow; the gradient takes no tape because the augment returns none
    source = """\
#include <stdio.h>
extern void __enzyme_autodiff(void *, ...);
extern int enzyme_dup;
__attribute__((noinline)) void square(const double *x, double *y) { *y = *x * *x; }
void square_aug(const double *x, const double *dx, double *y, double *dy) { *y = *x * *x; }
void square_grad(const double *x, double *dx, const double *y, double *dy) {
  *dx += 10 * 2 * *x * *dy;
  *dy = 0;
}
void *__enzyme_register_gradient_square[3] = {(void *)square, (void *)square_aug, (void *)square_grad};
void f(const double *x, double *out) { double y; square(x, &y); *out = 3 * y; }
int main(void) {
  double x = 1.5, dx = 0, out = 0, dout = 1;
  __enzyme_autodiff((void *)f, enzyme_dup, &x, &dx, enzyme_dup, &out, &dout);
  printf("%.17g %.17g\\n", dx, out);
  return 0;
}
"""
    assert build_and_run(work, source) == [90.0, 6.75]


@pytest.mark.parametrize("rule, register", [
    ("typedef struct { double primal, tangent; } pair_t;\n"
     "pair_t sq_fwd(double x, double dx) { pair_t r = {x * x, 10 * 2 * x * dx}; return r; }\n", "pair"),
    ("double sq_fwd(double x, double dx) { return 10 * 2 * x * dx; }\n", "tangent only"),
])
def test_forward_rule_shapes(work, rule, register):
    source = HEAD + rule + """
void *__enzyme_register_derivative_sq[2] = {(void *)sq, (void *)sq_fwd};
double use(double x) { return sq(x) * x; }   /* needs sq's primal too: x^3 -> 10 * 2x * x + x^2 */
int main(void) {
  printf("%.17g %.17g %.17g\\n", __enzyme_fwddiff((void *)sq, 1.5, 1.0), __enzyme_fwddiff((void *)outer, 1.5, 1.0),
         __enzyme_fwddiff((void *)use, 1.5, 1.0));
  return 0;
}
"""
    assert build_and_run(work, source) == [30.0, 91.0, 30.0 * 1.5 + 2.25]


def test_gradient_rule_of_wrong_arity_is_an_error_naming_the_convention(work):
    source = HEAD + """
double sq_aug(double x) { return x * x; }
double sq_grad(double dret) { return dret; }
void *__enzyme_register_gradient_sq[3] = {(void *)sq, (void *)sq_aug, (void *)sq_grad};
""" + MAIN
    write(work, "prog.c", source)
    proc = run([ENZYME_BUILD, "cc", "-O2", "prog.c", "-o", "prog"], work)
    assert proc.returncode == 1
    assert "the gradient rule sq_grad of sq takes 1 parameter(s)" in proc.stderr
    assert "needs 2" in proc.stderr
    assert "the tape if the augment returns one" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (work / "prog").exists()
