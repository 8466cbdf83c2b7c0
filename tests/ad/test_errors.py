"""Build-time errors of the AD stage: one clear message, exit 1, no output file."""
from __future__ import annotations

import os
import subprocess

import pytest

from ad_helpers import HERE, build_with_stage, enzyme_build_cli
from enzyme_build.errors import EnzymeBuildError

PROGRAMS = os.path.join(HERE, "programs")


def test_missing_body_names_function_and_chain(tmp_path):
    with pytest.raises(EnzymeBuildError) as info:
        build_with_stage(os.path.join(PROGRAMS, "err_nobody.c"), str(tmp_path), extra=("-g",))
    err = info.value
    assert "mystery" in err.message
    assert "top -> helper -> mystery" in err.message
    assert err.location and err.location.endswith("err_nobody.c:4")
    assert "__enzyme_inactivefn" in err.hint and "gradient" in err.hint


def test_missing_body_via_cli_exits_1_without_output(tmp_path):
    out = tmp_path / "prog"
    if not os.path.exists(enzyme_build_cli()):
        pytest.skip("enzyme-build CLI not installed")
    proc = subprocess.run([enzyme_build_cli(), "cc", "-O2", os.path.join(PROGRAMS, "err_nobody.c"),
                           "-o", str(out), "-lm"], capture_output=True, text=True)
    assert proc.returncode == 1
    assert "mystery" in proc.stderr and "Traceback" not in proc.stderr
    assert not out.exists()


def test_small_caller_owned_tape_is_an_error(tmp_path):
    src = tmp_path / "small.c"
    src.write_text("""
extern int enzyme_dup, enzyme_const, enzyme_allocated, enzyme_tape;
void *__enzyme_augmentfwd(void *, ...);
void f(double *x, int n) { for (int i = 0; i < n; i++) x[i] *= x[i]; }
int main(void) { double x[2] = {1, 2}, d[2] = {1, 1}; char buf[8];
  __enzyme_augmentfwd((void *)f, enzyme_allocated, 8, enzyme_tape, buf, enzyme_dup, x, d, enzyme_const, 2);
  return 0; }
""")
    with pytest.raises(EnzymeBuildError) as info:
        build_with_stage(str(src), str(tmp_path))
    assert "enzyme_allocated" in info.value.message


def test_active_vector_code_is_differentiated(tmp_path):
    """Once refused ("insertelement" on active values): vector code is split into scalars
    before the engine (tests/ad/test_vector_code.py has the class)."""
    src = tmp_path / "vec.c"
    src.write_text("""
#include <stdio.h>
typedef double v2 __attribute__((vector_size(16)));
double __enzyme_autodiff(void *, ...);
__attribute__((noinline)) double f(double x) { v2 a = {x, 2 * x}; v2 b = a * a; return b[0] + b[1]; }
int main(void) { printf("%.17g\\n", __enzyme_autodiff((void *)f, 1.5)); return 0; }
""")
    exe = build_with_stage(str(src), str(tmp_path))
    out = subprocess.run([exe], capture_output=True, text=True, check=True).stdout
    assert float(out) == 15.0      # d/dx (x^2 + 4 x^2) = 10 x


def test_pointer_without_shadow_names_the_parameter(tmp_path):
    src = tmp_path / "noshadow.c"
    src.write_text("""
double __enzyme_autodiff(void *, ...);
double f(const double *p, double x) { return p[0] * x; }
int main(void) { double a = 2; return __enzyme_autodiff((void *)f, &a, 0.5) > 0; }
""")
    with pytest.raises(EnzymeBuildError) as info:
        build_with_stage(str(src), str(tmp_path))
    assert "parameter 1" in info.value.message and "@f" in info.value.message
    assert "enzyme_const" in info.value.hint


def test_const_pointer_stored_into_a_struct_of_active_pointers_names_the_fix(tmp_path):
    """A pointer passed with enzyme_const kept in a struct beside pointers that carry
    derivatives (n-body's `struct system {const double *mass; double *pos, ...}` before
    optimization; Enzyme's "mismatched activity") and read back by a function that cannot be
    inlined into the struct's owner (recursive): the message names the parameter and says
    how to pass it instead. (With a callee that can be inlined, the AD stage inlines it and
    the program builds: tests/ad/test_context_structs.py.)"""
    src = tmp_path / "mixed.c"
    src.write_text("""
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
struct sys { const double *w; double *x; };
__attribute__((noinline)) double energy(struct sys *s, int k) {
  return k ? 0.5 * energy(s, k - 1) : s->w[0] * s->x[0] * s->x[0];
}
double f(const double *w, double *x) { struct sys s = {w, x}; return energy(&s, 2); }
int main(void) {
  double w = 2, x = 3, dx = 0;
  __enzyme_autodiff((void *)f, enzyme_const, &w, enzyme_dup, &x, &dx);
  return dx != 3;
}
""")
    with pytest.raises(EnzymeBuildError) as info:
        build_with_stage(str(src), str(tmp_path), ad_before_opt=True)
    message = info.value.message
    assert "pointer parameter %" in message and " of f has no shadow" in message, message
    assert "enzyme_const" in message and "stored into memory that holds differentiated data" in message
    assert "enzyme_dup and a zeroed buffer" in info.value.hint


APPLY_CALLBACK = """
double __enzyme_autodiff(void *, ...);
extern int enzyme_const;
typedef double (*fn)(double);
__attribute__((noinline)) double apply(fn g, double x) { return g(x) * x; }
"""


def test_active_indirect_call_is_differentiated(tmp_path):
    """The pointer is one of the program's functions (sq or 0): the call dispatches on it."""
    src = tmp_path / "indirect.c"
    src.write_text("#include <stdio.h>\n" + APPLY_CALLBACK + """double sq(double x) { return x * x; }
int main(int argc, char **argv) { fn g = argc > 5 ? 0 : sq;
  printf("%.17g\\n", __enzyme_autodiff((void *)apply, enzyme_const, g, 0.5)); return 0; }
""")
    exe = build_with_stage(str(src), str(tmp_path))
    assert float(subprocess.run([exe], capture_output=True, text=True, check=True).stdout) == 0.75


def test_active_indirect_call_from_outside_the_program_is_refused(tmp_path):
    """No function of the program has the call's type: the pointer cannot be one of them."""
    src = tmp_path / "indirect.c"
    src.write_text("#include <dlfcn.h>\n" + APPLY_CALLBACK + """int main(void) { fn g = (fn)dlsym(RTLD_DEFAULT, "cbrt");
  return __enzyme_autodiff((void *)apply, enzyme_const, g, 0.5) > 0; }
""")
    with pytest.raises(EnzymeBuildError) as info:
        build_with_stage(str(src), str(tmp_path))
    assert "indirect call" in info.value.message and "apply" in info.value.message
    assert "no function of the program" in info.value.message


def test_untyped_copy_without_context_is_an_error(tmp_path):
    """A memcpy of void* data that no caller ever accesses as a typed value stays an error."""
    src = tmp_path / "untyped.c"
    src.write_text("""
#include <string.h>
double __enzyme_autodiff(void *, ...);
__attribute__((noinline)) void cp(void *d, const void *s, size_t n) { memcpy(d, s, n); }
__attribute__((noinline)) void g(void *x, void *y, int n) { cp(y, x, n * 8); }
int main(void) { double x[2] = {1, 2}, y[2], dx[2] = {0}, dy[2] = {1, 1};
  __enzyme_autodiff((void *)g, x, dx, y, dy, 2); return (int)dx[0]; }
""")
    with pytest.raises(EnzymeBuildError) as info:
        build_with_stage(str(src), str(tmp_path), opt="-O0")
    assert "memcpy of data of unknown type" in info.value.message
    assert "-O1" in info.value.hint


def _error_of(tmp_path, name, source):
    src = tmp_path / name
    src.write_text(source)
    with pytest.raises(EnzymeBuildError) as info:
        build_with_stage(str(src), str(tmp_path))
    return info.value


@pytest.mark.parametrize("entry", ["__enzyme_autodiff", "__enzyme_fwddiff"])
def test_inline_asm_is_named_as_such(tmp_path, entry):
    err = _error_of(tmp_path, "asm.c", """
double %s(void *, ...);
double f(double a) { double r; __asm__("movsd %%1, %%0" : "=x"(r) : "x"(a)); return r * a; }
int main(void) { return %s((void *)f, 1.0%s) > 0; }
""" % (entry, entry, ", 1.0" if "fwd" in entry else ""))
    assert "inline assembly" in err.message and "indirect" not in err.message
    assert "custom derivative rule" in err.hint


def test_marker_mismatch_names_parameter_position_and_entry_point(tmp_path):
    err = _error_of(tmp_path, "mm.c", """
extern int enzyme_out, enzyme_const;
double __enzyme_autodiff(void *, ...);
double f(double *x, int n) { double s = 0; for (int i = 0; i < n; i++) s += x[i] * x[i]; return s; }
int main(void) { double x[2] = {1, 2}; __enzyme_autodiff((void *)f, enzyme_out, x, enzyme_const, 2); return 0; }
""")
    assert "parameter 1 (ptr)" in err.message and "a pointer" in err.message and "%" not in err.message
    assert "enzyme_dup" in err.hint
    err = _error_of(tmp_path, "mm2.c", """
double __enzyme_fwddiff(void *, ...);
double f(double a, double b) { return a * b; }
int main(void) { return __enzyme_fwddiff((void *)f, 1.0, 1.0, 2.0) > 0; }
""")
    assert "__enzyme_fwddiff" in err.message and ".site" not in err.message + (err.location or "")


def test_nested_differentiation_is_named(tmp_path):
    """Nested AD works innermost first; a function differentiating itself has no innermost site."""
    err = _error_of(tmp_path, "nested.c", """
#include <math.h>
double __enzyme_autodiff(void *, ...);
double self(double x) { return x > 1 ? __enzyme_autodiff((void *)self, x - 1) : sin(x); }
int main(void) { return __enzyme_autodiff((void *)self, 2.5) > 0; }
""")
    assert "__enzyme_autodiff" in err.message and "itself differentiates" in err.message
    assert ".site" not in err.message


def test_forward_only_missing_body_hints_a_forward_rule(tmp_path):
    err = _error_of(tmp_path, "fwdonly.c", """
double blackbox(double x);
double __enzyme_fwddiff(void *, ...);
double outer(double x) { return blackbox(x * x) + x; }
int main(void) { return __enzyme_fwddiff((void *)outer, 0.5, 1.0) > 0; }
""")
    assert "blackbox" in err.message
    assert '"forward"' in err.hint and "__enzyme_register_derivative_blackbox" in err.hint
    assert "gradient" not in err.hint


def test_float_bits_packed_with_an_int_are_an_error_not_a_zero(tmp_path):
    """{float, int} passed by value travels as one i64. Where the function cannot be
    inlined away (it is recursive; non-recursive ones are differentiated, see
    tests/ad/test_coerced_boundaries.py), refuse instead of dropping the float's derivative."""
    err = _error_of(tmp_path, "packed.c", """
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
typedef struct { float val; int depth; } acc;
__attribute__((noinline)) static acc down(acc a, const double *x) {
  if (a.depth == 0) return a;
  acc b = {a.val * (float)x[a.depth % 4], a.depth - 1};
  return down(b, x);
}
double f(const double *x) { acc a = {1.0f, 5}; return down(a, x).val; }
int main(void) {
  double x[4] = {0.5, -1.5, 1.0, 0.25}, d[4] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, d);
  return d[1] == 0;
}
""")
    assert "bits of an active float" in err.message
    assert "by pointer" in err.hint


@pytest.mark.parametrize("ty, ir", [("_Float16", "half"), ("__float128", "fp128")])
def test_arithmetic_in_a_precision_without_derivatives_is_named(tmp_path, ty, ir):
    """half and fp128 arithmetic on the active path is refused by name, never differentiated
    as if it were double; the same function's double arithmetic alone is fine."""
    err = _error_of(tmp_path, "prec.c", """
double __enzyme_autodiff(void *, ...);
double f(double x) { %s h = (%s)x; h = h * h + h; return (double)h * x; }
int main(void) { return __enzyme_autodiff((void *)f, 0.5) > 0; }
""" % (ty, ty))
    assert f"cannot differentiate {ir} arithmetic" in err.message and "@f" in err.message
    assert "double or float" in err.hint


def test_split_pieces_with_different_markers_are_an_error(tmp_path):
    """The markers choose the tape's layout: a reverse call whose markers no augmentfwd call
    of the function uses would read a tape laid out for another specialization."""
    src = tmp_path / "pairs.c"
    src.write_text("""
extern int enzyme_dup, enzyme_const, enzyme_not_overwritten;
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);
double f(const double *x, int n) { double s = 0; for (int i = 0; i < n; i++) s += x[i] * x[i]; return s; }
int main(void) { double x[2] = {1, 2}, d[2] = {0, 0};
  void *t = __enzyme_augmentfwd((void *)f, enzyme_not_overwritten, enzyme_dup, x, d, enzyme_const, 2);
  __enzyme_reverse((void *)f, enzyme_dup, x, d, enzyme_const, 2, 1.0, t);
  return d[0] != 2; }
""")
    with pytest.raises(EnzymeBuildError) as info:
        build_with_stage(str(src), str(tmp_path))
    err = info.value
    assert "__enzyme_reverse of @f" in err.message
    assert "enzyme_not_overwritten enzyme_dup" in err.message
    assert "enzyme_not_overwritten" in err.hint
    assert err.location


def test_untyped_copy_hint_fits_the_build(tmp_path):
    """With AD before optimization, std::vector<std::array<double, 3>>::push_back relocates its
    elements with a memmove in a helper that never touches the data: refused, and the hint must
    not tell a -O2 build to use -O1 (the type tags are there; the helper is what hides the
    type)."""
    src = tmp_path / "relocate.cpp"
    src.write_text("""
#include <array>
#include <vector>
extern int enzyme_dup;
extern "C" void __enzyme_autodiff(void *, ...);
extern "C" double f(const double *x) {
  std::vector<std::array<double, 3>> pts;
  for (int i = 0; i < 4; i++) pts.push_back({x[i], x[i] * x[i], 1.0});
  double s = 0;
  for (auto &p : pts) s += p[0] * p[1] + p[2];
  return s;
}
int main() {
  double x[4] = {1, 2, 3, 4}, g[4] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, g);
  return g[0] != 4;
}
""")
    with pytest.raises(EnzymeBuildError) as info:
        build_with_stage(str(src), str(tmp_path), cxx=True, ad_before_opt=True)
    assert "memcpy of data of unknown type" in info.value.message, info.value.message
    assert "-O1" not in info.value.hint and "ENZYME_BUILD_AD_BEFORE_OPT" in info.value.hint, info.value.hint
