"""Enzyme's marker attributes, resolved at compile time: `enzyme_inactive`,
`enzyme_inactive_noblock`, `enzyme_function_like("log1p")` and `enzyme_shadow(d_g)`.

Each program is built through the real `enzyme-build cc` / `c++` and its derivatives are
checked against closed forms. Without the attributes these programs give the primal bodies'
derivatives (3 instead of 1, 2 instead of 1/3, a shadow that stays 0 instead of 9).
"""
from __future__ import annotations

import pytest

from custom_helpers import ENZYME_BUILD, run, write

COMMON = """\
#include <stdio.h>
extern double __enzyme_autodiff(void *, ...);
extern double __enzyme_fwddiff(void *, ...);
"""


def build_and_run(work, sources: dict[str, str], *, cxx: bool = False, flags=("-O2",)) -> list[float]:
    for name, text in sources.items():
        write(work, name, text)
    objects = []
    for name in sources:
        if name.endswith(".h"):
            continue
        obj = name.rsplit(".", 1)[0] + ".o"
        proc = run([ENZYME_BUILD, "c++" if cxx else "cc", *flags, "-c", name, "-o", obj], work)
        assert proc.returncode == 0, proc.stderr
        assert "unknown attribute" not in proc.stderr, proc.stderr
        objects.append(obj)
    proc = run([ENZYME_BUILD, "c++" if cxx else "cc", *flags, *objects, "-o", "prog", "-lm"], work)
    assert proc.returncode == 0, proc.stderr
    proc = run([work / "prog"], work)
    assert proc.returncode == 0, proc.stderr
    return [float(v) for v in proc.stdout.split()]


# ------------------------------------------------------------------ enzyme_inactive


@pytest.mark.parametrize("spelling", ["enzyme_inactive", "enzyme_inactive_noblock", "__enzyme_inactive__"])
def test_inactive_helper_on_declaration(work, spelling):
    # d/da (twice(a) + a) = 1 when twice is inactive (3 when differentiated through)
    values = build_and_run(work, {"main.c": COMMON + f"""
double twice(double a) __attribute__(({spelling}));
double twice(double a) {{ return 2 * a; }}
double f(double a) {{ return twice(a) + a; }}
int main(void) {{
  printf("%.17g %.17g\\n", __enzyme_autodiff((void *)f, 1.5), __enzyme_fwddiff((void *)f, 1.5, 1.0));
  return 0;
}}
"""})
    assert values == [1.0, 1.0]


def test_inactive_on_definition_in_another_translation_unit(work):
    # the attribute sits on twice's definition in its own TU; the user's TU only declares it
    values = build_and_run(work, {
        "twice.c": "__attribute__((enzyme_inactive)) double twice(double a) { return 2 * a; }\n",
        "main.c": COMMON + """
double twice(double a);
double f(double a) { return twice(a) * a + a; }
int main(void) {
  printf("%.17g %.17g\\n", __enzyme_autodiff((void *)f, 1.5), __enzyme_fwddiff((void *)f, 1.5, 1.0));
  return 0;
}
"""}, flags=("-O0",))
    # twice(a) is a constant 3: d/da (3 a + a) = 4
    assert values == [4.0, 4.0]


def test_inactive_global_written_with_an_active_value(work):
    # as in Enzyme, the store of an active value into an inactive global carries no
    # derivative (and is not refused): the value read back is a constant of the next call
    values = build_and_run(work, {"main.c": COMMON + """
double last_x __attribute__((enzyme_inactive)) = 2.0;
double f(double x) { double r = last_x * x; last_x = x; return r; }
int main(void) {
  double d1 = __enzyme_autodiff((void *)f, 3.0);      /* last_x = 2, then 3 */
  double d2 = __enzyme_fwddiff((void *)f, 5.0, 1.0);  /* last_x = 3, then 5 */
  printf("%.17g %.17g %.17g\\n", d1, d2, last_x);
  return 0;
}
"""})
    assert values == [2.0, 3.0, 5.0]


def test_inactive_global_is_a_constant(work):
    # a global the program writes (so the engine would shadow it) but marked inactive: it is
    # read as a constant, and its registration reaches the engine
    values = build_and_run(work, {"main.c": COMMON + """
double scale __attribute__((enzyme_inactive)) = 1.0;
double f(double x) { return scale * x * x; }
int main(void) {
  scale = 2.0;
  printf("%.17g %.17g\\n", __enzyme_autodiff((void *)f, 3.0), __enzyme_fwddiff((void *)f, 3.0, 1.0));
  return 0;
}
"""})
    assert values == [12.0, 12.0]


# ------------------------------------------------------------------ enzyme_function_like


def test_function_like_log1p_reverse_and_forward(work):
    # the body's derivative is 2 at x = 2 (x * x / 2 + 0 ...); log1p's is 1 / (1 + x) = 1/3
    values = build_and_run(work, {"main.c": COMMON + """
__attribute__((enzyme_function_like("log1p"))) double my_log1p(double x) { return x * x / 2; }
double f(double x) { return my_log1p(x); }
double g(double x) { return 3 * my_log1p(x * x); }
int main(void) {
  printf("%.17g %.17g\\n", __enzyme_autodiff((void *)f, 2.0), __enzyme_fwddiff((void *)f, 2.0, 1.0));
  printf("%.17g\\n", __enzyme_autodiff((void *)g, 2.0));
  return 0;
}
"""})
    assert values[0] == pytest.approx(1 / 3, rel=1e-15)
    assert values[1] == pytest.approx(1 / 3, rel=1e-15)
    assert values[2] == pytest.approx(3 * 2 * 2.0 / (1 + 4.0), rel=1e-15)


def test_function_like_on_declaration_in_header_defined_elsewhere(work):
    values = build_and_run(work, {
        "mylog.h": 'double my_log(double x) __attribute__((enzyme_function_like("log")));\n',
        "mylog.c": '#include "mylog.h"\ndouble my_log(double x) { return x; }\n',
        "main.c": COMMON + """#include "mylog.h"
double f(double x) { return my_log(x) * x; }
int main(void) {
  printf("%.17g %.17g\\n", __enzyme_autodiff((void *)f, 4.0), __enzyme_fwddiff((void *)f, 4.0, 1.0));
  return 0;
}
"""})
    # my_log'(x) x + my_log(x) with log's derivative 1/x and the body's value x: 1 + x = 5
    # (differentiating the body, x * x, would give 8)
    assert values == [5.0, 5.0]


# ------------------------------------------------------------------ enzyme_shadow


SHADOW_PROGRAM = COMMON + """
double d_g;
double g __attribute__((enzyme_shadow(d_g))) = 3.0;
double f(double x) { return g * x * x; }
int main(void) {
  double dx = __enzyme_autodiff((void *)f, 3.0);
  printf("%.17g %.17g\\n", dx, d_g);            /* 2 g x = 18, adjoint of g = x^2 = 9 */
  __enzyme_autodiff((void *)f, 3.0);
  printf("%.17g\\n", d_g);                       /* accumulated, like an enzyme_dup shadow */
  d_g = 1.0;                                    /* forward: seed g's tangent, x fixed */
  printf("%.17g\\n", __enzyme_fwddiff((void *)f, 3.0, 0.0));
  d_g = 0.0;
  printf("%.17g\\n", __enzyme_fwddiff((void *)f, 3.0, 1.0));
  return 0;
}
"""


def test_shadow_global_reverse_and_forward(work):
    assert build_and_run(work, {"main.c": SHADOW_PROGRAM}) == [18.0, 9.0, 18.0, 9.0, 18.0]


def test_shadow_global_at_O0(work):
    assert build_and_run(work, {"main.c": SHADOW_PROGRAM}, flags=("-O0",)) == [18.0, 9.0, 18.0, 9.0, 18.0]


def test_shadow_of_a_global_written_in_another_translation_unit(work):
    values = build_and_run(work, {
        "state.c": "double d_acc;\ndouble acc __attribute__((enzyme_shadow(d_acc)));\n"
                   "void add(double v) { acc += v * v; }\n",
        "main.c": COMMON + """
extern double acc;
extern double d_acc;
void add(double v);
double f(double x) { acc = 0; add(x); add(2 * x); return acc; }
int main(void) {
  d_acc = 0;
  printf("%.17g\\n", __enzyme_autodiff((void *)f, 1.5));   /* d/dx 5 x^2 = 10 x */
  return 0;
}
"""})
    assert values == [15.0]


# ------------------------------------------------------------------ C++


def test_cxx_spellings(work):
    values = build_and_run(work, {"main.cc": """\
#include <cstdio>
extern "C" double __enzyme_autodiff(void *, ...);
extern "C" double __enzyme_fwddiff(void *, ...);
namespace phys {
[[enzyme::inactive]] double twice(double a) { return 2 * a; }
[[enzyme::function_like("log1p")]] double my_log1p(double x) { return x; }
double d_k;
double k __attribute__((enzyme_shadow(d_k))) = 3.0;
double twice(int a) { return 2.0 * a; }   // an overload without the attribute
}
double f(double a) { return phys::twice(a) + a; }
double h(double x) { return phys::my_log1p(x); }
double s(double x) { return phys::k * x * x; }
int main() {
  std::printf("%.17g %.17g\\n", __enzyme_autodiff((void *)f, 1.5), __enzyme_fwddiff((void *)f, 1.5, 1.0));
  std::printf("%.17g\\n", __enzyme_autodiff((void *)h, 2.0));
  __enzyme_autodiff((void *)s, 3.0);
  std::printf("%.17g\\n", phys::d_k);
  return 0;
}
"""}, cxx=True)
    assert values[:2] == [1.0, 1.0]
    assert values[2] == pytest.approx(1 / 3, rel=1e-15)
    assert values[3] == 9.0


@pytest.mark.parametrize("flags", [("-O0",), ("-O2",)])
def test_marker_attributes_on_members_and_templates(work, flags):
    """The class: marker attributes on C++ entities no file-scope expression names, registered
    by symbol. Members: a function template (every instantiation), a static member function of
    a class template, a non-static member function, a static data member (attribute on the
    in-class declaration, and on the out-of-class definition), a static data member of a class
    template, a variable template, enzyme_shadow on a static data member, function_like on a
    static member function. (Each was refused.) Without the attributes the gradient would be
    1 + 2 + 3 + 4 + 2 + 1/(1+x) and the written members would not stay constants."""
    values = build_and_run(work, {"main.cc": """\
#include <cstdio>
extern "C" double __enzyme_autodiff(void *, ...);
template <class T> __attribute__((noinline, enzyme_inactive)) T twice(T a) { return 2 * a; }
template <class T> struct Holder {
  __attribute__((noinline, enzyme_inactive)) static T thrice(T a) { return 3 * a; }
  __attribute__((enzyme_inactive)) static T tally;
};
template <class T> T Holder<T>::tally = 0;
struct Box {
  double k = 4;
  __attribute__((noinline, enzyme_inactive)) double times(double a) const { return k * a; }
  __attribute__((enzyme_inactive)) static double seen;
  static double last;
  static double d_scale;
  __attribute__((enzyme_shadow(d_scale))) static double scale;
  __attribute__((noinline, enzyme_function_like("log1p"))) static double mylog1p(double x) { return x; }
};
double Box::seen = 0;
__attribute__((enzyme_inactive)) double Box::last = 0;
double Box::d_scale = 0, Box::scale = 1.5;
template <class T> __attribute__((enzyme_inactive)) T var_tally = 0;
double f(double x) {
  Box b;
  Holder<double>::tally += x;
  Box::seen += x;
  Box::last = x;
  var_tally<double> += x;
  return x + twice<double>(x) + twice<float>((float)x) + Holder<double>::thrice(x) + b.times(x)
         + Box::scale * x + Box::mylog1p(x) + Holder<double>::tally * 0 + Box::seen * 0 + Box::last * 0
         + var_tally<double> * 0;
}
int main() {
  double x = 0.5;
  std::printf("%.17g %.17g\\n", __enzyme_autodiff((void *)f, x), Box::d_scale);
  return 0;
}
"""}, cxx=True, flags=flags)
    assert values[0] == pytest.approx(1 + 1.5 + 1 / (1 + 0.5), rel=1e-14)
    assert values[1] == 0.5


# ------------------------------------------------------------------ names and misuse


def test_identifiers_named_like_the_attributes_keep_working(work):
    values = build_and_run(work, {"main.c": COMMON + """
int enzyme_function_like = 4;
static double enzyme_inactive(double x) { return x * x; }
struct { int enzyme_shadow; } s = {5};
double f(double x) { return enzyme_inactive(x); }
int main(void) {
  printf("%d %d %.17g\\n", enzyme_function_like, s.enzyme_shadow, __enzyme_autodiff((void *)f, 3.0));
  return 0;
}
"""})
    assert values == [4.0, 5.0, 6.0]


@pytest.mark.parametrize("source, message", [
    ('__attribute__((enzyme_function_like(42))) double f(double x) { return x; }\n',
     "must be a string literal"),
    ("__attribute__((enzyme_inactive(1))) double f(double x) { return x; }\n", "takes no arguments"),
    ("double d;\n__attribute__((enzyme_shadow(d))) double f(double x) { return x; }\n",
     "belongs on a global variable"),
    ("double d;\nvoid f(void) { static double g __attribute__((enzyme_shadow(d))); (void)g; }\n",
     "belongs on a global variable"),
    ("struct S { __attribute__((enzyme_inactive)) double v; };\nS s;\n",
     "the enzyme_inactive attribute is on a non-static data member"),
    ("namespace { struct S { __attribute__((enzyme_inactive)) static double f(double x) { return x; } }; }\n"
     "double g(double x) { return S::f(x); }\n", "member of a class in an anonymous namespace"),
])
def test_misused_marker_attributes_are_clear_errors(work, source, message):
    cxx = "struct" in source and "enzyme_shadow" not in source
    write(work, "bad.cc" if cxx else "bad.c", source)
    proc = run([ENZYME_BUILD, "c++" if cxx else "cc", "-c", "bad.cc" if cxx else "bad.c", "-o", "bad.o"], work)
    assert proc.returncode == 1, proc.stderr
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (work / "bad.o").exists()


@pytest.mark.parametrize("flags", [("-O2", "-Werror"), ("-O2", "-w"), ("-O1", "-Wall", "-Wextra")])
def test_marker_attributes_under_warning_flags(work, flags):
    # -Werror must not turn the dropped attribute into a failure, -w must not hide it from us
    values = build_and_run(work, {"main.c": COMMON + """
double twice(double a) __attribute__((enzyme_inactive));
double twice(double a) { return 2 * a; }
double f(double a) { return twice(a) + a; }
int main(void) {
  printf("%.17g\\n", __enzyme_autodiff((void *)f, 1.5));
  return 0;
}
"""}, flags=flags)
    assert values == [1.0]
