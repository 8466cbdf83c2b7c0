"""Forward-mode call sites the engine must reject: one clear compile-time error naming the
call site (file:line with -g) and the parameter, exit 1 through the CLI, no output file."""
from __future__ import annotations

import os
import subprocess

import pytest

from forward_helpers import enzyme_build_cli, frontend_ir

PRELUDE = """#include <math.h>
extern int enzyme_dup, enzyme_const, enzyme_out, enzyme_width;
double __enzyme_fwddiff(void *, ...);
typedef struct { double d[2]; } vec2;
vec2 __enzyme_fwddiff2(void *, ...);
double ext(double);
__attribute__((noinline)) double f(double x) { return sin(x) * x; }
__attribute__((noinline)) double g(const double *v, int n) {
  double s = 0; for (int i = 0; i < n; i++) s += v[i] * v[i]; return s;
}
__attribute__((noinline)) double h(double x) { return ext(x) * 2.0; }
__attribute__((noinline)) double k(double x) { return h(x) + 1.0; }
double __enzyme_autodiff(void *, ...);
__attribute__((noinline)) double grad_f(double x) { return __enzyme_autodiff((void *)f, x); }
double selfd(double x) { return x > 1 ? __enzyme_fwddiff((void *)selfd, x - 1, 1.0) : sin(x); }
"""


def _stage_error(tmp_path, body: str):
    from enzyme_build import llvm
    from enzyme_build.ad.stage import run_ad_stage
    from enzyme_build.errors import EnzymeBuildError

    src = tmp_path / "bad.c"
    src.write_text(PRELUDE + "int main(int argc, char **argv) {\n  double v[2] = {1, 2}, dv[2] = {0};\n"
                   + body + "\n  return 0;\n}\n")
    module = llvm.parse_assembly(frontend_ir(str(src), str(tmp_path), extra=("-g",)), "bad.c")
    with pytest.raises(EnzymeBuildError) as info:
        run_ad_stage(module)
    return info.value


BODY_LINE = PRELUDE.count("\n") + 3   # the line of `body` in bad.c


@pytest.mark.parametrize("body,words", [
    # a float parameter needs its tangent
    ("  return (int)__enzyme_fwddiff((void *)f, 1.0);", ["tangent", "parameter 1", "@f", "missing"]),
    # a marker where the shadow of v belongs
    ("  return (int)__enzyme_fwddiff((void *)g, enzyme_dup, v, enzyme_const, 2);",
     ["enzyme_const", "shadow", "parameter 1", "@g"]),
    # too few shadows in vector mode
    ("  vec2 r = __enzyme_fwddiff2((void *)g, enzyme_width, 2, v, dv, 2); return (int)r.d[0];",
     ["shadow 2 of 2", "parameter 1", "@g", "must be ptr"]),
    ("  return (int)__enzyme_fwddiff((void *)f, 1.0, 1.0, 3.0);", ["too many arguments", "@f"]),
    ("  return (int)__enzyme_fwddiff((void *)f, enzyme_out, 1.0);", ["enzyme_out", "reverse-mode", "parameter 1"]),
    ("  return (int)__enzyme_fwddiff((void *)f, 1.0, enzyme_width, 2, 1.0, 2.0);",
     ["marker enzyme_width", "tangent of parameter 1"]),
    ("  return (int)__enzyme_fwddiff((void *)f, enzyme_const, 1.0, enzyme_width, 2);",
     ["enzyme_width", "right after the function"]),
    ("  return (int)__enzyme_fwddiff((void *)f, enzyme_width, argc, 1.0, 1.0, 2.0);",
     ["enzyme_width", "integer constant"]),
    # the declared result cannot hold the tangents
    ("  vec2 r = __enzyme_fwddiff2((void *)f, enzyme_width, 3, 1.0, 1.0, 2.0, 3.0); return (int)r.d[0];",
     ["3 tangents", "double", "@f"]),
])
def test_call_site_errors(tmp_path, body, words):
    err = _stage_error(tmp_path, body)
    text = err.render()
    for w in words:
        assert w in text, text
    assert f"bad.c:{BODY_LINE}" in text, text


def test_self_differentiating_function_is_a_clear_error(tmp_path):
    """Nested AD works innermost first (test_nested_second_derivatives); a function that
    differentiates itself has no innermost call site."""
    err = _stage_error(tmp_path, "  return (int)__enzyme_fwddiff((void *)selfd, 2.5, 1.0);")
    assert "@selfd calls __enzyme_fwddiff" in err.render() and "not supported" in err.render()


def test_missing_derivative_names_the_chain(tmp_path):
    err = _stage_error(tmp_path, "  return (int)__enzyme_fwddiff((void *)k, 1.0, 1.0);")
    text = err.render()
    assert "'ext'" in text and "k -> h -> ext" in text, text
    assert "inactive" in err.hint


def test_cli_error_exit_and_no_output(tmp_path):
    src = tmp_path / "bad.c"
    src.write_text(PRELUDE + "int main(void) { double v[2] = {1, 2};\n"
                   "  return (int)__enzyme_fwddiff((void *)g, enzyme_dup, v, enzyme_const, 2); }\n")
    out = tmp_path / "bad"
    proc = subprocess.run([enzyme_build_cli(), "cc", "-O2", str(src), "-o", str(out), "-lm"],
                          capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    assert "enzyme_const" in proc.stderr and "Traceback" not in proc.stderr
    assert not os.path.exists(out)


RULES = """
typedef struct { void *tape; double primal; } aug_t;
double cube(double x);                                  /* no body anywhere */
aug_t cube_aug(double x) { aug_t r = {0, x * x * x}; return r; }
double cube_grad(double x, double d, void *t) { return 3 * x * x * d; }
void *__enzyme_register_gradient_cube[] = {(void *)cube, (void *)cube_aug, (void *)cube_grad};
__attribute__((noinline)) double use_cube(double x) { return cube(x) + x; }
"""
POINTER_RULE = """

__attribute__((noinline)) void scale(const double *x, double *y, double k) { y[0] = k * x[0]; }
void scale_fwd(const double *x, const double *dx, double *y, double *dy, double k, double dk) {
  y[0] = k * x[0]; dy[0] = k * dx[0] + dk * x[0];
}
void *__enzyme_register_derivative_scale[] = {(void *)scale, (void *)scale_fwd};
__attribute__((noinline)) double use_scale(const double *x, double t) { double y[1]; scale(x, y, t); return y[0]; }
"""


def test_reverse_rules_only_need_a_forward_rule(tmp_path):
    src = PRELUDE + RULES + "int main(void) { return (int)__enzyme_fwddiff((void *)use_cube, 1.0, 1.0); }\n"
    text = _module_error(tmp_path, src).render()
    assert "'cube'" in text and "no forward rule" in text and "__enzyme_register_derivative_cube" in text, text


def test_custom_rule_needs_shadowed_pointers(tmp_path):
    src = PRELUDE + POINTER_RULE + ("int main(void) { double x[1] = {1};\n"
                             "  return (int)__enzyme_fwddiff((void *)use_scale, enzyme_const, x, 2.0, 1.0); }\n")
    text = _module_error(tmp_path, src).render()
    assert "scale_fwd" in text and "pointer argument 1" in text and "enzyme_dup" in text, text


def _module_error(tmp_path, source: str):
    from enzyme_build import llvm
    from enzyme_build.ad.stage import run_ad_stage
    from enzyme_build.errors import EnzymeBuildError

    src = tmp_path / "bad.c"
    src.write_text(source)
    module = llvm.parse_assembly(frontend_ir(str(src), str(tmp_path)), "bad.c")
    with pytest.raises(EnzymeBuildError) as info:
        run_ad_stage(module)
    return info.value


def test_long_double_parameters_and_results(tmp_path):
    """x86 long double is differentiated like double (it used to be refused here)."""
    from forward_helpers import build_with_stage
    src = tmp_path / "ld.c"
    src.write_text("#include <math.h>\n#include <stdio.h>\n"
                   "long double __enzyme_fwddiffl(void *, ...);\n"
                   "long double __enzyme_autodiffl(void *, ...);\n"
                   "__attribute__((noinline)) long double f(long double x) { return x * x * sinl(x); }\n"
                   "int main(void) { long double a = __enzyme_fwddiffl((void *)f, 2.0L, 1.0L);\n"
                   "  long double b = __enzyme_autodiffl((void *)f, 2.0L);\n"
                   "  long double w = 4.0L * sinl(2.0L) + 4.0L * cosl(2.0L);\n"
                   "  return !(fabsl(a - w) < 1e-15L && fabsl(b - w) < 1e-15L); }\n")
    exe = build_with_stage(str(src), str(tmp_path))
    assert subprocess.run([exe]).returncode == 0

def test_float_pair_by_value_is_a_clear_error(tmp_path):
    """{float, float} by value is one <2 x float> register. It is differentiated lane by lane
    through the function's twin (stage.vector_lane_entries; tests/ad/test_vector_parameters.py);
    a function that also takes a struct in memory (byval) gets no twin, and there the pair is
    refused by name (not "too many arguments"), unless it is enzyme_const."""
    from enzyme_build import llvm
    from enzyme_build.ad.stage import run_ad_stage
    from enzyme_build.errors import EnzymeBuildError

    src = tmp_path / "fpair.c"
    src.write_text("extern int enzyme_const;\ndouble __enzyme_fwddiff(void *, ...);\n"
                   "typedef struct { float x, y; } fvec2;\n"
                   "typedef struct { double a[4]; } big;\n"
                   "double flen(fvec2 v, big b) { return (v.x * v.x + 3.0f * v.y) * b.a[1]; }\n"
                   "double act(fvec2 f, fvec2 df, big b) { return __enzyme_fwddiff((void *)flen, f, df, enzyme_const, &b); }\n"
                   "double cst(fvec2 f, big b) { return __enzyme_fwddiff((void *)flen, enzyme_const, f, enzyme_const, &b); }\n")
    text = frontend_ir(str(src), str(tmp_path))
    with pytest.raises(EnzymeBuildError) as info:
        run_ad_stage(llvm.parse_assembly(text, "fpair.c"))
    assert "parameter 1 (<2 x float>) of @flen is a vector of floats" in info.value.message
    assert "enzyme_dup" in info.value.hint
    # enzyme_const: nothing to pair, so it builds
    src.write_text("\n".join(line for line in src.read_text().splitlines() if not line.startswith("double act(")))
    run_ad_stage(llvm.parse_assembly(frontend_ir(str(src), str(tmp_path)), "fpair.c"))


def test_cxx_missing_rule_is_named_demangled(tmp_path):
    """C++ names in the message and chain are demangled; the suggested code compiles in C++."""
    src = tmp_path / "dm.cc"
    src.write_text('#include <cstdio>\nextern "C" double __enzyme_fwddiff(void *, ...);\n'
                   "namespace sim { double blackbox(double x); }\n"
                   "double run(double x) { return sim::blackbox(x * x) * 2.0; }\n"
                   'int main() { std::printf("%g\\n", __enzyme_fwddiff((void *)run, 0.5, 1.0)); return 0; }\n')
    cxx = os.path.join(os.path.dirname(enzyme_build_cli()), "enzyme-build")
    proc = subprocess.run([cxx, "c++", "-O2", str(src), "-o", str(tmp_path / "dm")], capture_output=True, text=True)
    assert proc.returncode == 1 and not (tmp_path / "dm").exists()
    assert "'sim::blackbox(double)'" in proc.stderr and "run(double) -> sim::blackbox(double)" in proc.stderr
    assert "_ZN3sim" not in proc.stderr
    assert 'extern "C" void* __enzyme_register_derivative_blackbox[] = {(void*)sim::blackbox, ' \
           "(void*)blackbox_fwd};" in proc.stderr


def test_indirect_call_names_where_the_pointer_comes_from(tmp_path):
    """A callback loaded from a struct the differentiated function receives, when no function of
    the program has its type (so it comes from outside the program): the message says so."""
    from enzyme_build import llvm
    from enzyme_build.ad.stage import run_ad_stage
    from enzyme_build.errors import EnzymeBuildError

    src = tmp_path / "cbs.c"
    src.write_text("extern int enzyme_const;\ndouble __enzyme_fwddiff(void *, ...);\n"
                   "typedef struct { double (*f)(double); double k; } cb;\n"
                   "double apply(const cb *c, double x) { return c->f(x * c->k); }\n"
                   "double go(const cb *c, const cb *dc) { return __enzyme_fwddiff((void *)apply, c, dc, 1.5, 1.0); }\n")
    with pytest.raises(EnzymeBuildError) as info:
        run_ad_stage(llvm.parse_assembly(frontend_ir(str(src), str(tmp_path)), "cbs.c"))
    assert "loaded from memory that parameter 1 of apply points to" in info.value.message
    assert "no function of the program whose address is taken has its type double (double)" in info.value.message
    assert "docs/indirect-calls.md" in info.value.hint


@pytest.mark.parametrize("source,words", [
    ("static _Atomic double total;\n"
     "double f(double x) { total = 0; total += x * x; return total; }\n", ["atomic read-modify-write", "_Thread_local"]),
    ("double f(double x) { static void *tbl[] = {&&a, &&b}; goto *tbl[(int)(x > 1)]; a: return x * x; "
     "b: return x * 3; }\n", ["computed goto", "switch"]),
])
def test_unsupported_constructs_are_named(tmp_path, source, words):
    """An _Atomic double accumulator (was a silent zero tangent) and a computed goto."""
    from enzyme_build import llvm
    from enzyme_build.ad.stage import run_ad_stage
    from enzyme_build.errors import EnzymeBuildError

    src = tmp_path / "u.c"
    src.write_text("double __enzyme_fwddiff(void *, ...);\n" + source +
                   "double go(double x) { return __enzyme_fwddiff((void *)f, x, 1.0); }\n")
    with pytest.raises(EnzymeBuildError) as info:
        run_ad_stage(llvm.parse_assembly(frontend_ir(str(src), str(tmp_path)), "u.c"))
    text = info.value.render()
    assert all(w in text for w in words), text
