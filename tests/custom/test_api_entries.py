"""Enzyme API entries beyond autodiff/fwddiff: __enzyme_batch, the registration globals
__enzyme_shadow_global / __enzyme_inactive_global / __enzyme_inactivenoblockfn /
__enzyme_allocation_like (and Enzyme's one-pointer `_autoreg_` form), and the entry points
enzyme-build refuses at the call site (__enzyme_shadow of a lane beyond its width, a context marker
without a context; contexts themselves: test_contexts.py).
(__enzyme_virtualreverse: tests/ad/test_indirect_calls.py.)
Programs are built through the real CLI and checked against closed forms."""
from __future__ import annotations

import os

import pytest

from custom_helpers import ENZYME_BUILD, run, write


def build(work, source: str, *flags: str, cxx: bool = False, name: str = "prog.c", env=None):
    write(work, name, source)
    return run([ENZYME_BUILD, "c++" if cxx else "cc", "-O2", *flags, name, "-o", "prog", "-lm"], work,
               env={**os.environ, **env} if env else None)


def build_and_run(work, source: str, *flags: str, cxx: bool = False, name: str = "prog.c",
                  env=None) -> list[float]:
    proc = build(work, source, *flags, cxx=cxx, name=name, env=env)
    assert proc.returncode == 0, proc.stderr
    proc = run([work / "prog"], work)
    assert proc.returncode == 0, proc.stderr
    return [float(v) for v in proc.stdout.split()]


# ------------------------------------------------------------------ __enzyme_batch


def test_batch_of_a_scalar_function_with_vector_and_scalar_parameters(work):
    values = build_and_run(work, """\
#include <stdio.h>
typedef struct { double a, b; } two;
extern two __enzyme_batch(void *, ...);
extern int enzyme_width, enzyme_vector, enzyme_scalar;
double f(double x, double k) { return k * x * x; }
int main(void) {
  two r = __enzyme_batch((void *)f, enzyme_width, 2, enzyme_vector, 3.0, 4.0, enzyme_scalar, 2.0);
  printf("%.17g %.17g\\n", r.a, r.b);
  return 0;
}
""")
    assert values == [18.0, 32.0]


def test_batch_of_four_lanes_returned_through_memory_in_cxx(work):
    # Enzyme's BatchMode test: a 32-byte struct comes back through a hidden pointer
    values = build_and_run(work, """\
#include <cstdio>
struct Vector { double x1, x2, x3, x4; };
extern Vector __enzyme_batch(...);
extern int enzyme_width;
extern int enzyme_vector;
double square(double x) { return x * x; }
Vector vecsquare(double a, double b, double c, double d) {
  return __enzyme_batch(square, enzyme_width, 4, enzyme_vector, a, b, c, d);
}
int main() {
  Vector v = vecsquare(23.1, 10.0, 100.0, 3.14);
  std::printf("%.17g %.17g %.17g %.17g\\n", v.x1, v.x2, v.x3, v.x4);
  return 0;
}
""", cxx=True, name="prog.cc")
    assert values == [23.1 * 23.1, 100.0, 10000.0, 3.14 * 3.14]


def test_batch_of_a_void_function_over_pointers(work):
    values = build_and_run(work, """\
#include <stdio.h>
extern void __enzyme_batch(void *, ...);
extern int enzyme_width;
void f(double *p) { p[1] = p[0] * 3; }
int main(void) {
  double a[2] = {1, 0}, b[2] = {2, 0}, c[2] = {5, 0};
  __enzyme_batch((void *)f, enzyme_width, 3, a, b, c);
  printf("%g %g %g\\n", a[1], b[1], c[1]);
  return 0;
}
""")
    assert values == [3.0, 6.0, 15.0]


def test_batch_with_a_missing_lane_is_an_error(work):
    proc = build(work, """\
typedef struct { double a, b; } two;
extern two __enzyme_batch(void *, ...);
extern int enzyme_width;
double f(double x) { return x; }
int main(void) { two r = __enzyme_batch((void *)f, enzyme_width, 2, 3.0); return (int)r.a; }
""", "-g")
    assert proc.returncode == 1
    assert "prog.c:5" in proc.stderr
    assert "lane 2 of parameter 1 (double) of @f is missing" in proc.stderr
    assert "Traceback" not in proc.stderr


# ------------------------------------------------------------------ registration globals


def test_shadow_global_registration_and_inactivenoblock_and_autoreg_forms(work):
    values = build_and_run(work, """\
#include <stdio.h>
extern double __enzyme_autodiff(void *, ...);
double g = 3.0, d_g;
double twice(double a) { return 2 * a; }
void *__enzyme_shadow_global_g[2] = {(void *)&g, (void *)&d_g};
void *__enzyme_inactivenoblockfn_autoreg_twice = (void *)twice;   /* Enzyme's plugin's form */
double f(double x) { return g * x * x + twice(x); }
int main(void) {
  printf("%.17g %.17g\\n", __enzyme_autodiff((void *)f, 3.0), d_g);
  return 0;
}
""")
    assert values == [18.0, 9.0]


def test_allocation_like_allocator_with_a_body(work):
    values = build_and_run(work, """\
#include <stdio.h>
#include <stdlib.h>
extern double __enzyme_autodiff(void *, ...);
void *my_alloc(size_t n) { return malloc(n); }
void my_free(void *p) { free(p); }
void *__enzyme_allocation_like[4] = {(void *)my_alloc, (void *)0, (void *)"-1", (void *)my_free};
double f(double x) {
  double *p = (double *)my_alloc(2 * sizeof(double));
  p[0] = x * x;
  p[1] = p[0] * x;
  double r = p[1];
  my_free(p);
  return r;
}
int main(void) {
  printf("%.17g\\n", __enzyme_autodiff((void *)f, 3.0));
  return 0;
}
""")
    assert values == [27.0]


def test_allocation_like_allocator_without_a_body_is_named(work):
    proc = build(work, """\
#include <stddef.h>
extern double __enzyme_autodiff(void *, ...);
void *pool_alloc(size_t n);
void pool_free(void *p);
void *__enzyme_allocation_like[4] = {(void *)pool_alloc, (void *)0, (void *)"-1", (void *)pool_free};
double f(double x) { double *p = (double *)pool_alloc(8); *p = x * x; double r = *p; pool_free(p); return r; }
int main(void) { return (int)__enzyme_autodiff((void *)f, 3.0); }
""")
    # refused with one message of ours: the allocator's memory can get no shadow (when the
    # allocator itself is reached by active data, the message names __enzyme_allocation_like)
    assert proc.returncode == 1
    assert proc.stderr.startswith("enzyme-build: error:")
    assert "cannot give the memory a shadow" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_malformed_shadow_registration_is_an_error(work):
    proc = build(work, """\
extern double __enzyme_autodiff(void *, ...);
double g = 3.0;
double h(double x) { return x; }
void *__enzyme_shadow_global_g[2] = {(void *)&g, (void *)h};
double f(double x) { return g * x; }
int main(void) { return (int)__enzyme_autodiff((void *)f, 3.0); }
""")
    assert proc.returncode == 1
    assert "must be {&global, &its_shadow}" in proc.stderr
    assert "Traceback" not in proc.stderr


# ------------------------------------------------------------------ __enzyme_shadow


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_shadow_query_of_globals_at_width_one(work, opt):
    # Enzyme's query of the shadow of a global (also a member of a global struct): reverse mode
    # accumulates the adjoints there, forward mode reads the tangents seeded there
    values = build_and_run(work, """\
#include <stdio.h>
extern void *__enzyme_shadow(void *, int, int);
extern double __enzyme_fwddiff(double (*)(double), ...);
extern double __enzyme_autodiff(double (*)(double), ...);
double g = 2.0;
struct { double a; double b; } blk = {1.0, 3.0};
double f(double x) { return g * x * x + blk.b * x; }
int main(void) {
  double *dg = (double *)__enzyme_shadow(&g, 1, 0);
  double *db = (double *)__enzyme_shadow(&blk.b, 1, 0);
  *dg = 0.0;
  *db = 0.0;
  double dx = __enzyme_autodiff(f, 3.0);
  printf("%.17g %.17g %.17g\\n", dx, *dg, *db);
  *dg = 1.0;
  *db = 0.0;
  printf("%.17g\\n", __enzyme_fwddiff(f, 3.0, 0.0));
  return 0;
}
""", opt)
    assert values == [2 * 2.0 * 3.0 + 3.0, 9.0, 3.0, 9.0]


@pytest.mark.parametrize("opt, env", [("-O0", {}), ("-O2", {}), ("-O2", {"ENZYME_BUILD_AD_BEFORE_OPT": "1"})],
                         ids=["O0", "O2", "adbefore"])
def test_shadow_query_of_globals_at_width_two(work, opt, env):
    # The class: the lanes of a global's tangent in vector forward mode, queried with
    # __enzyme_shadow(&g, 2, lane). Members: a scalar, a struct member, an array element; lane 0
    # is the width-1 shadow; the lanes are the user's (not cleared after the call), so a
    # second call sees the same seeds. (Was refused: only width 1 was supported.)
    values = build_and_run(work, """\
#include <stdio.h>
typedef struct { double d1, d2; } Tangents;
extern void *__enzyme_shadow(void *, int, int);
extern Tangents __enzyme_fwddiff2(double (*)(double), ...) __asm__("__enzyme_fwddiff");
extern int enzyme_width;
double g = 2.0;
struct { double a; double b; } blk = {1.0, 3.0};
double w[3] = {0.5, 1.5, -2.0};
double f(double x) { return g * x * x + blk.b * x + w[2] * w[1] * x; }
int main(void) {
  double *dg0 = (double *)__enzyme_shadow(&g, 2, 0), *dg1 = (double *)__enzyme_shadow(&g, 2, 1);
  double *db1 = (double *)__enzyme_shadow(&blk.b, 2, 1);
  double *dw0 = (double *)__enzyme_shadow(&w, 2, 0), *dw1 = (double *)__enzyme_shadow(&w, 2, 1);
  double *dg = (double *)__enzyme_shadow(&g, 1, 0);
  *dg0 = 1.0; *dg1 = 0.0; *db1 = 1.0; dw0[2] = 1.0; dw1[1] = 2.0;
  for (int rep = 0; rep < 2; rep++) {
    Tangents t = __enzyme_fwddiff2(f, enzyme_width, 2, 3.0, 0.5, 0.0);
    printf("%.17g %.17g\\n", t.d1, t.d2);
  }
  printf("%d %.17g %.17g\\n", dg == dg0, *dg1, dw1[1]);
  return 0;
}
""", opt, env=env)
    x = 3.0
    lane0 = 2 * 2.0 * x * 0.5 + x * x + 3.0 * 0.5 + (-2.0) * 1.5 * 0.5 + 1.5 * x
    lane1 = x + (-2.0) * 2.0 * x
    assert values == [lane0, lane1, lane0, lane1, 1, 0.0, 2.0]


# ------------------------------------------------------------------ refused entry points


@pytest.mark.parametrize("declaration, call, entry, message", [
    ("extern void *__enzyme_shadow(void *, int, int);", "__enzyme_shadow(&g, 2, 2)",
     "__enzyme_shadow(&g, width, lane) needs a constant width and a constant lane below it", "lane 2"),
    ("extern void *__enzyme_shadow(void *, void *, int);", "__enzyme_shadow((void *)0, &g, 0)",
     "__enzyme_shadow(ctx, &g, lane) needs a context made by __enzyme_context", "in the same function"),
])
def test_unsupported_entry_points_are_errors_at_the_call_site(work, declaration, call, entry, message):
    proc = build(work, f"""\
#include <stdio.h>
{declaration}
double g = 2;
double f(double x) {{ return g * x; }}
int main(void) {{
  void *p = {call};
  printf("%p %g\\n", p, __enzyme_autodiff((void *)f, 1.0));
  return 0;
}}
""".replace("#include <stdio.h>", "#include <stdio.h>\nextern double __enzyme_autodiff(void *, ...);"), "-g")
    assert proc.returncode == 1, proc.stderr
    assert f"prog.c:7: {entry}" in proc.stderr
    assert message in proc.stderr
    assert "undefined reference" not in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (work / "prog").exists()


def test_enzyme_context_marker_without_a_context_is_refused(work):
    proc = build(work, """\
extern double __enzyme_autodiff(void *, ...);
extern int enzyme_context;
double f(double x) { return x * x; }
int main(void) { return (int)__enzyme_autodiff((void *)f, enzyme_context, (void *)0, 3.0); }
""", "-g")
    assert proc.returncode == 1
    assert "enzyme_context must be followed by a context made by __enzyme_context" in proc.stderr
    assert "prog.c:4" in proc.stderr
    assert "Traceback" not in proc.stderr
