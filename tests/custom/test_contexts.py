"""Shadow contexts: `__enzyme_context(width)`, the `enzyme_context` marker,
`__enzyme_shadow(ctx, &g, lane)` and `__enzyme_zero_shadows(ctx)` (enzyme_build/ad/contexts.py).

`programs/contexts.c` checks reverse mode (globals read, overwritten, an array), forward,
split and width-2 vector forward mode against central differences and closed forms, that
zeroing works, that calls accumulate and that a call without a context leaves a context's
shadows alone. The refusals name the call site."""
from __future__ import annotations

import os

import pytest

from custom_helpers import ENZYME_BUILD, run, write

HERE = os.path.dirname(os.path.abspath(__file__))
HCHECK_DIR = os.path.join(HERE, "..", "acceptance")


@pytest.mark.parametrize("flags, env", [(["-O0"], {}), (["-O2"], {}), (["-O2"], {"ENZYME_BUILD_AD_BEFORE_OPT": "1"})],
                         ids=["O0", "O2", "adbefore"])
def test_contexts_program(work, flags, env):
    source = os.path.join(HERE, "programs", "contexts.c")
    proc = run([ENZYME_BUILD, "cc", *flags, "-I", HCHECK_DIR, source, "-o", "prog", "-lm"], work,
               env={**os.environ, **env})
    assert proc.returncode == 0, proc.stderr
    out = run([work / "prog"], work)
    assert out.returncode == 0 and out.stdout.strip() == "ok 22", out.stdout + out.stderr


@pytest.mark.parametrize("flags, env", [(["-O0"], {}), (["-O3"], {}), (["-O2"], {"ENZYME_BUILD_AD_BEFORE_OPT": "1"})],
                         ids=["O0", "O3", "adbefore"])
def test_shadows_of_globals_holding_pointers(work, flags, env):
    """The class: a global whose value points at other memory gets a shadow that points at that
    memory's shadow. Members in programs/context_pointers.c: a struct of pointer and length, an
    array of pointers with offsets, a pointer, two levels of structs, width 2, plain calls after
    the queries, and pointers set at run time given buffers by the user (each crashed in the
    derivative, following a null shadow pointer)."""
    source = os.path.join(HERE, "programs", "context_pointers.c")
    proc = run([ENZYME_BUILD, "cc", *flags, "-I", HCHECK_DIR, source, "-o", "prog", "-lm"], work,
               env={**os.environ, **env})
    assert proc.returncode == 0, proc.stderr
    out = run([work / "prog"], work)
    assert out.returncode == 0 and out.stdout.strip() == "ok 43", out.stdout + out.stderr


@pytest.mark.parametrize("decl, init", [
    ("double *a;", "a = malloc(8 * sizeof(double));"),
    ("struct { long n; double *v; } a;", "a.n = 8; a.v = malloc(8 * sizeof(double));"),
    ("double *a[2];", "a[1] = malloc(8 * sizeof(double)); a[0] = a[1];"),
], ids=["pointer", "struct-field", "array"])
def test_null_shadow_of_a_pointer_set_at_run_time_stops_with_a_message(work, decl, init):
    """A pointer global set at run time has no shadow memory until the user gives it one: the
    derivative would write through a null pointer. The program stops before the call, naming
    the global and the fix."""
    read = {"pointer": "a[i]", "struct-field": "a.v[i]", "array": "a[1][i]"}
    kind = "pointer" if decl == "double *a;" else "struct-field" if "struct" in decl else "array"
    write(work, "prog.c", f"""#include <enzyme/enzyme.h>
#include <stdlib.h>
#include <stdio.h>
{decl}
double f(double x) {{ double s = 0; for (int i = 0; i < 8; i++) s += {read[kind]} * {read[kind]} * x; return s; }}
int main(void) {{
  {init}
  for (int i = 0; i < 8; i++) {read[kind]} = i;
  void *ctx = __enzyme_context(1);
  void *d = __enzyme_shadow(ctx, &a, 0);
  printf("before\\n"); fflush(stdout);
  double dx = __enzyme_autodiff((void *)f, enzyme_context, ctx, 1.0);
  printf("after %g %p\\n", dx, d);
  return 0;
}}
""")
    proc = run([ENZYME_BUILD, "cc", "-O2", "prog.c", "-o", "prog", "-lm"], work)
    assert proc.returncode == 0, proc.stderr
    out = run([work / "prog"], work)
    assert out.returncode != 0 and out.stdout.strip() == "before", out.stdout + out.stderr
    assert "the shadow of the pointer global 'a' in a differentiation context is null" in out.stderr, out.stderr
    assert "__enzyme_shadow(ctx, &a, lane)" in out.stderr, out.stderr


HEAD = """\
#include <enzyme/enzyme.h>
double g = 2;
double f(double x) { return g * x * x; }
"""


@pytest.mark.parametrize("body, message", [
    # the context leaves the function that made it
    ("""void *kept;
__attribute__((noinline)) void use(void *c) { kept = c; }
int main(void) { void *c = __enzyme_context(1); use(c);
  return (int)__enzyme_autodiff((void *)f, enzyme_context, c, 1.0) + (kept != 0); }""",
     "a differentiation context is passed to @use"),
    ("""volatile int w = 1;
int main(void) { void *c = __enzyme_context(w); return (int)__enzyme_autodiff((void *)f, enzyme_context, c, 1.0); }""",
     "the width of a differentiation context must be a constant"),
    ("""int main(void) { void *c = __enzyme_context(1); double *d = __enzyme_shadow(c, &g, 1);
  return (int)(*d + __enzyme_autodiff((void *)f, enzyme_context, c, 1.0)); }""",
     "lane 1 of a context of width 1 does not exist"),
    ("""int main(void) { __enzyme_zero_shadows((void *)0); return (int)__enzyme_autodiff((void *)f, 1.0); }""",
     "__enzyme_zero_shadows"),
], ids=["passed-on", "width", "lane", "zero-without-context"])
def test_context_misuse_is_an_error_at_the_call_site(work, body, message):
    write(work, "prog.c", HEAD + body + "\n")
    proc = run([ENZYME_BUILD, "cc", "-g", "-O2", "prog.c", "-o", "prog", "-lm"], work)
    assert proc.returncode == 1, proc.stderr
    assert message in proc.stderr, proc.stderr
    assert "prog.c:" in proc.stderr or "@main" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and "undefined reference" not in proc.stderr
    assert not (work / "prog").exists()


def test_lowering_ir():
    """The query becomes the address of the context's shadow global, the marker and the
    context leave the AD call, whose callee names the context; the module verifies."""
    from enzyme_build import llvm
    from enzyme_build.ad.contexts import finish, lower_contexts
    from enzyme_build.custom.registry import Registry
    text = """
@g = internal global [2 x double] [double 1.0, double 2.0], align 8
@enzyme_context = external global i32
declare ptr @__enzyme_context(i32)
declare ptr @__enzyme_shadow(ptr, ...)
declare void @__enzyme_zero_shadows(ptr)
declare double @__enzyme_autodiff(ptr, ...)
define double @f(double %x) {
entry:
  %v = load double, ptr getelementptr (i8, ptr @g, i64 8), align 8
  %r = fmul double %v, %x
  ret double %r
}
define double @main() {
entry:
  %ctx = call ptr @__enzyme_context(i32 1)
  %d = call ptr (ptr, ...) @__enzyme_shadow(ptr %ctx, ptr getelementptr (i8, ptr @g, i64 8), i32 0)
  store double 0.0, ptr %d, align 8
  %r = call double (ptr, ...) @__enzyme_autodiff(ptr @f, ptr @enzyme_context, ptr %ctx, double 3.0)
  call void @__enzyme_zero_shadows(ptr %ctx)
  ret double %r
}
"""
    out, registry, contexts = lower_contexts(text, Registry())
    assert contexts.widths == {0: 1} and registry.context_globals == {"@g": "[2 x double]"}
    assert "getelementptr i8, ptr getelementptr (i8, ptr @g$ctx0, i64 8), i64 0" in out
    assert "@__enzyme_autodiff.ctx0(ptr @f, double 3.0)" in out and "@enzyme_context," not in out
    assert "call void @__enzyme_build_zero_context0()" in out
    done = finish(out, contexts)
    assert "@g$ctx0 = internal global [2 x double] zeroinitializer" in done
    llvm.verify(llvm.parse_assembly(done))
