"""custom/collect.py on IR text produced by real clang-22 (and llvm-link for several TUs)."""
from __future__ import annotations

import pytest

from enzyme_build.custom import collect
from enzyme_build.custom.collect import collect_registry
from enzyme_build.errors import EnzymeBuildError

from custom_helpers import clang_ir, llvm_tool, run, write

SQUARE = """\
#include <math.h>
double sq(double x) { return x * x; }
typedef struct { void *tape; double primal; } aug_t;
aug_t sq_aug(double x) { aug_t r = {0, x * x}; return r; }
double sq_grad(double x, double dret, void *tape) { return 4 * x * dret; }
typedef struct { double primal, tangent; } fwd_t;
fwd_t sq_fwd(double x, double dx) { fwd_t r = {x * x, 4 * x * dx}; return r; }
"""

REGISTRATIONS = SQUARE + """\
void *__enzyme_register_gradient_sq[3] = {(void *)sq, (void *)sq_aug, (void *)sq_grad};
void *__enzyme_register_derivative_sq[2] = {(void *)sq, (void *)sq_fwd};
void log_it(const char *s);
int counter(void);
void *__enzyme_inactivefn[] = {(void *)log_it, (void *)counter};
double my_log1p(double x) { return log(1 + x); }
void *__enzyme_function_like[2] = {(void *)my_log1p, "log1p"};
"""


def test_enzyme_registration_globals_of_each_kind(work):
    registry = collect_registry(clang_ir(work, "r.c", REGISTRATIONS))
    rule = registry.rules["sq"]
    assert (rule.augment, rule.gradient, rule.forward) == ("sq_aug", "sq_grad", "sq_fwd")
    assert rule.origins == {"augment": "__enzyme_register_gradient_sq",
                            "gradient": "__enzyme_register_gradient_sq",
                            "forward": "__enzyme_register_derivative_sq"}
    assert registry.inactive == {"log_it", "counter"}
    assert registry.function_like == {"my_log1p": "log1p"}
    assert registry.registration_globals == {
        "__enzyme_register_gradient_sq", "__enzyme_register_derivative_sq",
        "__enzyme_inactivefn", "__enzyme_function_like"}
    assert registry.referenced_functions() == {
        "sq", "sq_aug", "sq_grad", "sq_fwd", "log_it", "counter", "my_log1p"}


def test_registrations_from_two_tus_merge(work):
    """What attribute resolution generates for a header included by several TUs: weak
    pairs (merged by llvm-link) and, for a static f, one static pair per TU."""
    write(work, "g.h", """\
double sq2(double x);
typedef struct { void *tape; double primal; } aug_t;
aug_t sq2_aug(double x);
double sq2_grad(double x, double dret, void *tape);
void *__enzyme_build_rule_augment_sq2__sq2_aug[2] __attribute__((used, weak)) = {(void *)sq2, (void *)sq2_aug};
void *__enzyme_build_rule_gradient_sq2__sq2_grad[2] __attribute__((used, weak)) = {(void *)sq2, (void *)sq2_grad};
static inline double sqs(double x) { return x * x; }
static double sqs_fwd_impl(double x, double dx) { return 2 * x * dx; }
typedef struct { double primal, tangent; } pair_t;
static pair_t sqs_fwd(double x, double dx) { pair_t r = {x * x, sqs_fwd_impl(x, dx)}; return r; }
static void *__enzyme_build_rule_forward_sqs__sqs_fwd[2] __attribute__((used)) = {(void *)sqs, (void *)sqs_fwd};
""")
    sources = {"b": '#include "g.h"\ndouble b(double x) { return sqs(x); }\n',
               "c": '#include "g.h"\ndouble c(double x) { return sqs(x) + sq2(x); }\n',
               "d": "typedef struct { void *tape; double primal; } aug_t;\n"
                    "double sq2(double x) { return x * x; }\n"
                    "aug_t sq2_aug(double x) { aug_t r = {0, x * x}; return r; }\n"
                    "double sq2_grad(double x, double dret, void *tape) { return dret; }\n"}
    for name, body in sources.items():
        (work / f"{name}.ll").write_text(clang_ir(work, f"{name}.c", body))
    linked = run([llvm_tool("llvm-link"), "-S", "b.ll", "c.ll", "d.ll", "-o", "-"], work)
    assert linked.returncode == 0, linked.stderr
    registry = collect_registry(linked.stdout)
    assert (registry.rules["sq2"].augment, registry.rules["sq2"].gradient) == ("sq2_aug", "sq2_grad")
    forwards = sorted((name, rule.forward) for name, rule in registry.rules.items() if name != "sq2")
    assert len(forwards) == 2 and all(f.startswith("sqs") and g.startswith("sqs_fwd") for f, g in forwards)
    assert len(registry.registration_globals) == 4


def test_conflicting_rules_name_both(work):
    text = clang_ir(work, "c.c", SQUARE + """\
double sq_grad2(double x, double dret, void *tape) { return dret; }
void *__enzyme_register_gradient_sq[3] = {(void *)sq, (void *)sq_aug, (void *)sq_grad};
void *__enzyme_build_rule_gradient_sq__sq_grad2[2] = {(void *)sq, (void *)sq_grad2};
""")
    with pytest.raises(EnzymeBuildError) as info:
        collect_registry(text)
    message = info.value.message
    assert "conflicting gradient rules for sq" in message
    assert "sq_grad " in message and "sq_grad2" in message


def test_rule_function_without_definition_is_an_error(work):
    text = clang_ir(work, "m.c", """\
double f(double x) { return x; }
typedef struct { void *tape; double primal; } aug_t;
aug_t f_aug(double x) { aug_t r = {0, x}; return r; }
double f_grad(double x, double dret, void *tape);
void *__enzyme_register_gradient_f[3] = {(void *)f, (void *)f_aug, (void *)f_grad};
""")
    with pytest.raises(EnzymeBuildError, match="the gradient rule f_grad of f is not defined"):
        collect_registry(text)


def test_augment_without_gradient_is_an_error(work):
    text = clang_ir(work, "m.c", SQUARE + """\
void *__enzyme_build_rule_augment_sq__sq_aug[2] = {(void *)sq, (void *)sq_aug};
""")
    with pytest.raises(EnzymeBuildError, match="sq has a custom augment rule .sq_aug. but no gradient"):
        collect_registry(text)


@pytest.mark.parametrize("registration, message", [
    ("double bad(double x, void *tape) { return x; }\n"
     "void *__enzyme_register_gradient_sq[3] = {(void *)sq, (void *)sq_aug, (void *)bad};\n",
     "the gradient rule bad of sq takes 2 parameter(s) (double, ptr); Enzyme's convention "
     "for sq(double) -> double needs 3"),
    ("fwd_t bad(double x) { fwd_t r = {x, x}; return r; }\n"
     "void *__enzyme_register_derivative_sq[2] = {(void *)sq, (void *)bad};\n",
     "the forward rule bad of sq takes 1 parameter(s)"),
    ("void *__enzyme_register_gradient_sq[2] = {(void *)sq, (void *)sq_aug};\n",
     "must hold 3 functions"),
    ("void *__enzyme_function_like[2] = {(void *)sq, (void *)sq_aug};\n",
     "must be {function, \"libm name\"}"),
])
def test_malformed_registrations_are_errors(work, registration, message):
    with pytest.raises(EnzymeBuildError) as info:
        collect_registry(clang_ir(work, "m.c", SQUARE + registration))
    assert message in info.value.message


def test_pointer_arguments_get_shadows_in_expected_arity(work):
    text = clang_ir(work, "p.c", """\
void scale(const double *x, double *y, int n) { for (int i = 0; i < n; i++) y[i] = 2 * x[i]; }
void *scale_aug(const double *x, const double *dx, double *y, double *dy, int n) { return 0; }
void scale_grad(const double *x, double *dx, double *y, double *dy, int n, void *tape) {}
void *__enzyme_register_gradient_scale[3] = {(void *)scale, (void *)scale_aug, (void *)scale_grad};
""")
    registry = collect_registry(text)
    assert registry.rules["scale"].gradient == "scale_grad"
    functions = collect.parse_functions(text)
    assert collect.expected_rule_arity("augment", functions["scale"]) == 5
    assert collect.expected_rule_arity("gradient", functions["scale"]) == 6
    assert collect.expected_rule_arity("forward", functions["scale"]) == 5


def test_cxx_mangled_names_and_quoted_symbols(work):
    text = clang_ir(work, "x.cc", """\
namespace ns { double f(double x) { return x; } }
struct aug_t { void *tape; double primal; };
aug_t f_aug(double x) { return {nullptr, x}; }
double f_grad(double x, double dret, void *tape) { return dret; }
extern "C" void *__enzyme_register_gradient_f[3] = {(void *)ns::f, (void *)f_aug, (void *)f_grad};
""")
    registry = collect_registry(text)
    assert registry.rules["_ZN2ns1fEd"].gradient == "_Z6f_gradddPv"
    quoted = 'define double @"a.b"(double %x) {\n  ret double %x\n}\n' \
             'define double @"a.b.grad"(double %x, double %d, ptr %t) {\n  ret double %d\n}\n' \
             'define { ptr, double } @"a.b.aug"(double %x) {\n  ret { ptr, double } zeroinitializer\n}\n' \
             '@"__enzyme_register_gradient_a.b" = global [3 x ptr] [ptr @"a.b", ptr @"a.b.aug", ptr @"a.b.grad"]\n'
    assert collect_registry(quoted).rules["a.b"].gradient == "a.b.grad"


def test_external_declarations_of_registration_globals_are_skipped():
    text = "@__enzyme_register_gradient_f = external global [3 x ptr]\n"
    registry = collect_registry(text)
    assert registry.rules == {} and registry.registration_globals == set()


def test_registrations_from_the_enzyme_h_macros(work):
    import os
    include = os.path.join(os.path.dirname(collect.__file__), os.pardir, "include")
    text = clang_ir(work, "h.c", '#include <enzyme/enzyme.h>\n' + SQUARE + """\
ENZYME_REGISTER_GRADIENT(sq, sq_aug, sq_grad);
ENZYME_REGISTER_DERIVATIVE(sq, sq_fwd);
double noise(double x) { return x; }
ENZYME_INACTIVE(noise);
double my_exp(double x) { return 1 + x; }
ENZYME_FUNCTION_LIKE(my_exp, "exp");
""", f"-I{os.path.normpath(include)}")
    registry = collect_registry(text)
    rule = registry.rules["sq"]
    assert (rule.augment, rule.gradient, rule.forward) == ("sq_aug", "sq_grad", "sq_fwd")
    assert registry.inactive == {"noise"}
    assert registry.function_like == {"my_exp": "exp"}


RULE_LIBRARY = """\
void core(const double *a, double *y, int n) { for (int i = 0; i < n; i++) y[i] += a[i]; }
void core_fwd(const double *a, double *da, double *y, double *dy, int n) { (void)da; (void)dy; core(a, y, n); }
void core_batch(const double *a, double *const *da, double *y, double *const *dy, int n, int width) {
  (void)da; (void)dy; (void)width; core(a, y, n);
}
void *__enzyme_register_derivative_core[2] = {(void *)core, (void *)core_fwd};
void *__enzyme_build_batch_derivative_core[2] = {(void *)core, (void *)core_batch};
void *__enzyme_build_null_shadows_core[2] = {(void *)core, (void *)".o."};
"""


def test_rule_library_registrations(work):
    """enzyme-build's own: null shadows (with the written pointers) and the batch forward rule."""
    registry = collect_registry(clang_ir(work, "lib.c", RULE_LIBRARY))
    rule = registry.rules["core"]
    assert (rule.forward, rule.forward_batch, rule.null_shadows) == ("core_fwd", "core_batch", ".o.")
    assert {"core", "core_fwd", "core_batch"} <= registry.referenced_functions()


def test_rule_library_registration_without_rules_is_an_error(work):
    text = clang_ir(work, "bad.c", RULE_LIBRARY.replace(
        "void *__enzyme_register_derivative_core[2] = {(void *)core, (void *)core_fwd};\n", "")
        .replace('".o."', '".x."'))
    with pytest.raises(EnzymeBuildError, match="one letter per parameter"):
        collect_registry(text)
    text = clang_ir(work, "bad2.c", RULE_LIBRARY.replace(
        "void *__enzyme_register_derivative_core[2] = {(void *)core, (void *)core_fwd};\n", ""))
    with pytest.raises(EnzymeBuildError, match="has no derivative rules"):
        collect_registry(text)
