"""Custom rules end to end: programs built with enzyme-build whose derivatives must come
from the user's rules. Every rule is deliberately NOT the true derivative (a scaled or
constant answer), so a test fails if the rule were ignored."""
from __future__ import annotations


import pytest

from custom_helpers import ENZYME_BUILD, run, write

RULE_HEADER = """\
#ifndef CUBE_H
#define CUBE_H
typedef struct { void *tape; double primal; } cube_aug_t;
cube_aug_t cube_aug(double x);
double cube_grad(double x, double dret, void *tape);
double cube(double x) __attribute__((enzyme("augment", cube_aug)));
double cube(double x) __attribute__((enzyme("gradient", cube_grad)));
extern int aug_calls, grad_calls;
#endif
"""


def build(work, sources: list[str], output: str = "prog", *flags: str):
    return run([ENZYME_BUILD, "cc", "-O2", *flags, *sources, "-o", output, "-lm"], work)


def build_and_run(work, sources: list[str], *flags: str) -> list[str]:
    proc = build(work, sources, "prog", *flags)
    assert proc.returncode == 0, proc.stderr
    result = run(["./prog"], work)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout.split()


def test_attribute_rule_in_header_two_tus_rule_and_definition_elsewhere(work):
    """cube() is defined in cube.c, its rules in rules.c, the attribute in a header that
    two TUs include; the gradient rule returns 2x the true derivative."""
    write(work, "cube.h", RULE_HEADER)
    write(work, "cube.c", "double cube(double x) { return x * x * x; }\n")
    write(work, "rules.c", """\
#include "cube.h"
int aug_calls, grad_calls;
cube_aug_t cube_aug(double x) { aug_calls++; cube_aug_t r = {0, x * x * x}; return r; }
double cube_grad(double x, double dret, void *tape) { grad_calls++; return 2 * 3 * x * x * dret; }
""")
    write(work, "model.c", """\
#include "cube.h"
double model(double x) { return cube(x) + cube(2 * x); }
""")
    write(work, "main.c", """\
#include <stdio.h>
#include "cube.h"
double model(double x);
double __enzyme_autodiff(void *, ...);
int main(void) {
  double d = __enzyme_autodiff((void *)model, 1.5);
  printf("%.12g %d %d %.12g\\n", d, aug_calls, grad_calls, model(1.5));
  return 0;
}
""")
    d, augs, grads, value = build_and_run(work, ["main.c", "model.c", "cube.c", "rules.c"])
    x = 1.5
    true = 3 * x * x + 2 * 3 * (2 * x) ** 2
    assert float(d) == pytest.approx(2 * true, rel=1e-12)   # the rule, not the truth
    assert (int(augs), int(grads)) == (2, 2)  # augmented primal once per call of cube
    assert float(value) == pytest.approx(x ** 3 + (2 * x) ** 3)


def test_enzyme_registration_globals_of_each_kind(work):
    write(work, "reg.c", """\
#include <math.h>
#include <stdio.h>
extern int enzyme_const, enzyme_dup;
double __enzyme_autodiff(void *, ...);

double sq(double x) { return x * x; }
typedef struct { void *tape; double primal; } aug_t;
aug_t sq_aug(double x) { aug_t r = {0, x * x}; return r; }
double sq_grad(double x, double dret, void *tape) { return 42.0 * dret; }
void *__enzyme_register_gradient_sq[3] = {(void *)sq, (void *)sq_aug, (void *)sq_grad};

double noisy_scale(double x) { return 3.0 * x; }       /* treated as inactive */
void *__enzyme_inactivefn[] = {(void *)noisy_scale};

double f_sq(double x) { return 5.0 * sq(x); }
double f_inactive(double x) { return x * noisy_scale(x); }

int main(void) {
  double x = 0.5;
  printf("%.12g %.12g\\n", __enzyme_autodiff((void *)f_sq, x),
         __enzyme_autodiff((void *)f_inactive, x));
  return 0;
}
""")
    reverse, inactive = map(float, build_and_run(work, ["reg.c"]))
    x = 0.5
    assert reverse == pytest.approx(5 * 42.0)
    assert inactive == pytest.approx(3.0 * x)          # d/dx x * const, with const = 3x


def test_function_like_registration(work):
    """my_log1p's body is the identity; registered as log1p its derivative is 1/(1+x)."""
    write(work, "like.c", """\
#include <stdio.h>
double __enzyme_autodiff(void *, ...);
double my_log1p(double x) { return x; }
void *__enzyme_function_like[2] = {(void *)my_log1p, "log1p"};
double f_like(double x) { return 2.0 * my_log1p(x); }
int main(void) { printf("%.12g\\n", __enzyme_autodiff((void *)f_like, 0.5)); return 0; }
""")
    (like,) = build_and_run(work, ["like.c"])
    assert float(like) == pytest.approx(2.0 / (1 + 0.5))


def test_forward_rule_from_registration_global(work):
    write(work, "regf.c", """\
#include <stdio.h>
double __enzyme_fwddiff(void *, ...);
double sq(double x) { return x * x; }
typedef struct { double primal, tangent; } fwd_t;
fwd_t sq_fwd(double x, double dx) { fwd_t r = {x * x, 7.0 * dx}; return r; }
void *__enzyme_register_derivative_sq[2] = {(void *)sq, (void *)sq_fwd};
double f_sq(double x) { return 5.0 * sq(x); }
int main(void) { printf("%.12g\\n", __enzyme_fwddiff((void *)f_sq, 0.5, 1.0)); return 0; }
""")
    (value,) = build_and_run(work, ["regf.c"])
    assert float(value) == pytest.approx(5 * 7.0)


def test_forward_rule_attribute_on_definition(work):
    write(work, "fw.c", """\
#include <stdio.h>
double __enzyme_fwddiff(void *, ...);
typedef struct { double primal, tangent; } pair_t;
pair_t g_fwd(double x, double dx);
__attribute__((enzyme("forward", g_fwd))) double g(double x) { return x * x; }
pair_t g_fwd(double x, double dx) { pair_t r = {x * x, -11.0 * dx}; return r; }
double h(double x) { return 2.0 * g(x) + x; }
int main(void) { printf("%.12g\\n", __enzyme_fwddiff((void *)h, 3.0, 1.0)); return 0; }
""")
    (value,) = build_and_run(work, ["fw.c"])
    assert float(value) == pytest.approx(2 * -11.0 + 1)


def test_pointer_rule_gets_shadows(work):
    """A rule for a function of arrays: every pointer is followed by its shadow."""
    write(work, "ptr.c", """\
#include <stdio.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
typedef struct { void *tape; double primal; } aug_t;
aug_t dot_aug(const double *a, double *da, const double *b, double *db, int n);
void dot_grad(const double *a, double *da, const double *b, double *db, int n,
              double dret, void *tape);
double dot(const double *a, const double *b, int n)
    __attribute__((enzyme("augment", dot_aug), enzyme("gradient", dot_grad)));
double dot(const double *a, const double *b, int n) {
  double s = 0; for (int i = 0; i < n; i++) s += a[i] * b[i]; return s;
}
aug_t dot_aug(const double *a, double *da, const double *b, double *db, int n) {
  aug_t r = {0, dot(a, b, n)}; return r;
}
void dot_grad(const double *a, double *da, const double *b, double *db, int n,
              double dret, void *tape) {
  for (int i = 0; i < n; i++) { da[i] += 10 * b[i] * dret; db[i] += 10 * a[i] * dret; }
}
double loss(const double *a, const double *b) { return 3 * dot(a, b, 3); }
int main(void) {
  double a[3] = {1, 2, 3}, b[3] = {4, 5, 6}, da[3] = {0}, db[3] = {0};
  __enzyme_autodiff((void *)loss, enzyme_dup, a, da, enzyme_dup, b, db);
  for (int i = 0; i < 3; i++) printf("%.12g %.12g\\n", da[i], db[i]);
  return 0;
}
""")
    values = [float(v) for v in build_and_run(work, ["ptr.c"])]
    a, b = [1, 2, 3], [4, 5, 6]
    assert values == pytest.approx([v for i in range(3) for v in (30 * b[i], 30 * a[i])])


def test_body_less_function_without_rule_fails_naming_it(work):
    write(work, "ext.c", """\
double mystery(double x);                 /* defined nowhere in bitcode */
double __enzyme_autodiff(void *, ...);
static double inner(double x) { return mystery(x) * x; }
double outer(double x) { return inner(x) + 1; }
int main(void) { return (int)__enzyme_autodiff((void *)outer, 2.0); }
""")
    write(work, "mystery.s", ".text\n.globl mystery\nmystery:\n  ret\n")
    proc = build(work, ["ext.c", "mystery.s"])
    assert proc.returncode == 1, proc.stderr
    message = proc.stderr
    assert "mystery" in message and "outer" in message
    assert "Traceback" not in message
    assert "enzyme(" in message or "gradient" in message     # fix 1: add a rule
    assert "inactive" in message                            # fix 2: mark it inactive
    assert "chain" in message or "->" in message
    assert sorted(p.name for p in work.iterdir()) == ["ext.c", "mystery.s"]   # no output at all


def test_missing_rule_definition_fails_at_link_time(work):
    write(work, "miss.c", """\
double __enzyme_autodiff(void *, ...);
typedef struct { void *tape; double primal; } aug_t;
aug_t f_aug(double x);
double f_grad(double x, double dret, void *tape);      /* never defined */
double f(double x) __attribute__((enzyme("augment", f_aug), enzyme("gradient", f_grad)));
double f(double x) { return x * x; }
aug_t f_aug(double x) { aug_t r = {0, x * x}; return r; }
int main(void) { return (int)__enzyme_autodiff((void *)f, 2.0); }
""")
    proc = build(work, ["miss.c"])
    assert proc.returncode != 0
    assert "f_grad" in proc.stderr and "Traceback" not in proc.stderr
    assert not (work / "prog").exists()


def test_rule_under_dash_w(work):
    """-w silences the warning the wrapper detects attributes by; the rule must still apply."""
    write(work, "w.c", """\
#include <stdio.h>
double __enzyme_autodiff(void *, ...);
typedef struct { void *tape; double primal; } aug_t;
aug_t q_aug(double x);
double q_grad(double x, double dret, void *tape);
double q(double x) __attribute__((enzyme("augment", q_aug), enzyme("gradient", q_grad)));
double q(double x) { return x * x; }
aug_t q_aug(double x) { aug_t r = {0, x * x}; return r; }
double q_grad(double x, double dret, void *tape) { return 100.0 * dret; }
double model(double x) { return 3.0 * q(x); }
int main(void) { printf("%.12g\\n", __enzyme_autodiff((void *)model, 2.0)); return 0; }
""")
    (value,) = build_and_run(work, ["w.c"], "-w")
    assert float(value) == pytest.approx(300.0)


def test_rule_applies_when_differentiating_the_function_itself(work):
    """As in Enzyme, __enzyme_autodiff(f) for an f with rules uses the rules."""
    write(work, "top.c", """\
#include <stdio.h>
double __enzyme_autodiff(void *, ...);
typedef struct { void *tape; double primal; } aug_t;
aug_t q_aug(double x);
double q_grad(double x, double dret, void *tape);
double q(double x) __attribute__((enzyme("augment", q_aug), enzyme("gradient", q_grad)));
double q(double x) { return x * x; }
aug_t q_aug(double x) { aug_t r = {0, x * x}; return r; }
double q_grad(double x, double dret, void *tape) { return 100.0 * dret; }
int main(void) { printf("%.12g\\n", __enzyme_autodiff((void *)q, 2.0)); return 0; }
""")
    (value,) = build_and_run(work, ["top.c"])
    assert float(value) == pytest.approx(100.0)


def test_rule_under_werror_and_static_function(work):
    write(work, "s.c", """\
#include <stdio.h>
double __enzyme_autodiff(void *, ...);
typedef struct { void *tape; double primal; } aug_t;
static aug_t q_aug(double x) { aug_t r = {0, x * x}; return r; }
static double q_grad(double x, double dret, void *tape) { (void)x; (void)tape; return -5.0 * dret; }
static double q(double x) __attribute__((enzyme("augment", q_aug), enzyme("gradient", q_grad)));
static double q(double x) { return x * x; }
static double model(double x) { return q(x) * 2.0; }
int main(void) { printf("%.12g\\n", __enzyme_autodiff((void *)model, 2.0)); return 0; }
""")
    (value,) = build_and_run(work, ["s.c"], "-Wall", "-Werror")
    assert float(value) == pytest.approx(-10.0)


def test_augment_and_gradient_attributes_in_separate_tus(work):
    write(work, "a.c", """\
typedef struct { void *tape; double primal; } aug_t;
aug_t t_aug(double x) { aug_t r = {0, x * x * x * x}; return r; }
double t(double x) __attribute__((enzyme("augment", t_aug)));
double use_a(double x) { return t(x); }
""")
    write(work, "b.c", """\
double t_grad(double x, double dret, void *tape) { return 1000.0 * dret; }
double t(double x) __attribute__((enzyme("gradient", t_grad)));
double t(double x) { return x * x * x * x; }
""")
    write(work, "main.c", """\
#include <stdio.h>
double __enzyme_autodiff(void *, ...);
double use_a(double x);
int main(void) { printf("%.12g\\n", __enzyme_autodiff((void *)use_a, 1.25)); return 0; }
""")
    (value,) = build_and_run(work, ["main.c", "a.c", "b.c"])
    assert float(value) == pytest.approx(1000.0)


def test_cxx_rule_on_namespaced_function(work):
    write(work, "n.cc", """\
#include <cstdio>
namespace phys {
double pot(double r);
}
struct aug_t { void *tape; double primal; };
aug_t pot_aug(double r) { return {nullptr, 1.0 / r}; }
double pot_grad(double r, double dret, void *) { return 3.5 * dret; }
namespace phys {
double pot(double r) __attribute__((enzyme("augment", pot_aug), enzyme("gradient", pot_grad)));
double pot(double r) { return 1.0 / r; }
}
extern "C" double __enzyme_autodiff(void *, ...);
double energy(double r) { return 2.0 * phys::pot(r); }
int main() { std::printf("%.12g\\n", __enzyme_autodiff((void *)energy, 2.0)); return 0; }
""")
    proc = run([ENZYME_BUILD, "c++", "-O2", "n.cc", "-o", "prog"], work)
    assert proc.returncode == 0, proc.stderr
    result = run(["./prog"], work)
    assert result.returncode == 0, result.stderr
    assert float(result.stdout) == pytest.approx(7.0)


def test_cxx_rules_named_inside_their_namespace(work):
    """Rules written unqualified next to f inside (nested) namespaces, including a static f
    and a reverse pair: each is looked up where it was written; forward and reverse."""
    write(work, "ns.cc", """\
#include <cmath>
#include <cstdio>
extern "C" { double __enzyme_fwddiff(void *, ...); double __enzyme_autodiff(void *, ...); }
struct dual { double primal, tangent; };
struct aug_t { void *tape; double primal; };
namespace phys { namespace drag_model {
dual drag_fwd(double v, double dv) { return {v * v, 5.0 * dv}; }
double drag(double v) __attribute__((enzyme("forward", drag_fwd)));
double drag(double v) { return v * v; }
aug_t drag_aug(double v) { return {nullptr, v * v}; }
double drag_grad(double v, double dret, void *) { return 7.0 * dret; }
double drag2(double v) __attribute__((enzyme("augment", drag_aug), enzyme("gradient", drag_grad)));
double drag2(double v) { return v * v; }
} }
namespace {
dual lift_fwd(double v, double dv) { return {std::sin(v), 3.0 * dv}; }
}
namespace phys {
static double lift(double v) __attribute__((enzyme("forward", lift_fwd)));
static double lift(double v) { return std::sin(v); }
double total(double v) { return drag_model::drag(v) + lift(v); }
}
double energy(double v) { return 2.0 * phys::drag_model::drag2(v); }
int main() {
  std::printf("%.12g %.12g\\n", __enzyme_fwddiff((void *)phys::total, 0.7, 1.0),
              __enzyme_autodiff((void *)energy, 0.7));
  return 0;
}
""")
    proc = run([ENZYME_BUILD, "c++", "-O2", "ns.cc", "-o", "prog"], work)
    assert proc.returncode == 0, proc.stderr
    result = run(["./prog"], work)
    assert result.returncode == 0, result.stderr
    assert [float(v) for v in result.stdout.split()] == [pytest.approx(8.0), pytest.approx(14.0)]


def test_conflicting_attribute_rules_in_two_tus_fail_the_link(work):
    write(work, "one.c", """\
typedef struct { void *tape; double primal; } aug_t;
aug_t c_aug(double x) { aug_t r = {0, x}; return r; }
double c_grad1(double x, double dret, void *tape) { return dret; }
double c(double x) __attribute__((enzyme("augment", c_aug), enzyme("gradient", c_grad1)));
double c(double x) { return x; }
""")
    write(work, "two.c", """\
double c_grad2(double x, double dret, void *tape) { return 2 * dret; }
double c(double x) __attribute__((enzyme("gradient", c_grad2)));
double __enzyme_autodiff(void *, ...);
int main(void) { return (int)__enzyme_autodiff((void *)c, 1.0); }
""")
    proc = build(work, ["one.c", "two.c"])
    assert proc.returncode == 1, proc.stderr
    assert "conflicting gradient rules for c: " in proc.stderr
    assert 'enzyme("gradient", c_grad1)' in proc.stderr and 'enzyme("gradient", c_grad2)' in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (work / "prog").exists()


@pytest.mark.parametrize("flags", [["-O2", "-g"], ["-O0", "-g"]], ids=["O2-g", "O0-g"])
def test_rule_in_debug_builds(work, flags):
    write(work, "dbg.c", """\
#include <stdio.h>
double __enzyme_autodiff(void *, ...);
typedef struct { void *tape; double primal; } aug_t;
aug_t q_aug(double x);
double q_grad(double x, double dret, void *tape);
double q(double x) __attribute__((enzyme("augment", q_aug), enzyme("gradient", q_grad)));
double q(double x) { return x * x; }
aug_t q_aug(double x) { aug_t r = {0, x * x}; return r; }
double q_grad(double x, double dret, void *tape) { (void)x; (void)tape; return 100.0 * dret; }
static double model(double x) { return 3.0 * q(x); }
int main(void) { printf("%.12g\\n", __enzyme_autodiff((void *)model, 2.0)); return 0; }
""")
    proc = run([ENZYME_BUILD, "cc", *flags, "dbg.c", "-o", "prog", "-lm"], work)
    assert proc.returncode == 0, proc.stderr
    result = run(["./prog"], work)
    assert float(result.stdout) == pytest.approx(300.0)


ARITY_PROGRAM = """\
#include <stdio.h>
#include <stdlib.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
typedef struct { void *tape; double primal; } aug_t;
__attribute__((noinline)) double dotw(const double *w, const double *x, int n) {
  double s = 0; for (int i = 0; i < n; i++) s += w[i] * x[i]; return s;
}
/* written for (w dup, x dup); deliberately 2*x instead of x */
aug_t dotw_aug(const double *w, double *dw, const double *x, double *dx, int n) {
  aug_t r = {malloc(8), dotw(w, x, n)}; return r;
}
void dotw_grad(const double *w, double *dw, const double *x, double *dx, int n, double dret, void *tape) {
  for (int i = 0; i < n; i++) { dw[i] += 2.0 * x[i] * dret; dx[i] += w[i] * dret; }
  free(tape);
}
void *__enzyme_register_gradient_dotw[] = {(void *)dotw, (void *)dotw_aug, (void *)dotw_grad};
double loss(const double *w, const double *x, int n) { return dotw(w, x, n) * 2.0; }
int main(void) {
  double w[2] = {1, 2}, dw[2] = {0}, x[2] = {3, 4}, dx[2] = {0};
  __enzyme_autodiff((void *)loss, enzyme_dup, w, dw, X_ACTIVITY, 2);
  printf("%g %g %g %g\\n", dw[0], dw[1], dx[0], dx[1]);
  return 0;
}
"""


def test_rule_called_with_fewer_shadows_than_it_takes_is_refused(work):
    """x enzyme_const: the rule for (w dup, x dup) would get 4/6 arguments for its 5/7
    parameters and crash at run time: a clear build error instead, and no output file."""
    write(work, "rconst.c", ARITY_PROGRAM)
    proc = build(work, ["rconst.c"], "rconst", "-DX_ACTIVITY=enzyme_const, x")
    assert proc.returncode == 1
    assert "@dotw_aug of @dotw takes 5 parameter(s), but this call passes 4" in proc.stderr
    assert "parameter(s) 2 with enzyme_dup" in proc.stderr and "Traceback" not in proc.stderr
    assert not (work / "rconst").exists()
    # the activity the rule was written for: the rule's (deliberately wrong) answer
    assert build_and_run(work, ["rconst.c"], "-DX_ACTIVITY=enzyme_dup, x, dx") == ["12", "16", "2", "4"]
    # the differentiated function itself has the rule
    write(work, "top.c", ARITY_PROGRAM.replace("(void *)loss", "(void *)dotw"))
    proc = build(work, ["top.c"], "top", "-DX_ACTIVITY=enzyme_const, x")
    assert proc.returncode == 1 and "@dotw_aug of @dotw takes 5 parameter(s)" in proc.stderr
    assert build_and_run(work, ["top.c"], "-DX_ACTIVITY=enzyme_dup, x, dx") == ["6", "8", "1", "2"]
