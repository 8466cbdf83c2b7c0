"""frontend/attributes.py: finding enzyme attributes, and compiling them into registrations."""
from __future__ import annotations

import os

import pytest

from enzyme_build.custom.collect import collect_registry
from enzyme_build.errors import EnzymeBuildError
from enzyme_build.frontend import attributes

from custom_helpers import CLANG, linked_ir, run, wrapper_cc, write

HEADER = """\
#ifndef SQ_H
#define SQ_H
typedef struct { void *tape; double primal; } sq_aug_t;
sq_aug_t sq_aug(double x);
double sq_grad(double x, double dret, void *tape);
double sq(double x) __attribute__((enzyme("augment", sq_aug), enzyme("gradient", sq_grad)));
#endif
"""


# --- detection ------------------------------------------------------------------------


@pytest.mark.parametrize("text, expected", [
    ("x.c:2:35: warning: unknown attribute 'enzyme' ignored [-Wunknown-attributes]", True),
    ("x.c:2:35: error: unknown attribute 'enzyme' ignored [-Werror,-Wunknown-attributes]", True),
    ("x.c:2:35: \x1b[0;1;35mwarning: \x1b[0munknown attribute '__enzyme__' ignored", True),
    ("x.c:2:35: warning: unknown attribute 'enzymes' ignored [-Wunknown-attributes]", False),
    ("x.c:3:1: warning: unused variable 'enzyme' [-Wunused-variable]", False),
    ("", False),
])
def test_mentions_enzyme_attribute(text, expected):
    assert attributes.mentions_enzyme_attribute(text) is expected


def test_find_attributes_skips_comments_strings_and_unrelated_identifiers():
    text = '''/* __attribute__((enzyme("gradient", no))) */
// __attribute__((enzyme("gradient", no)))
const char *s = "__attribute__((enzyme(\\"gradient\\", no)))";
int enzyme(int x);
struct s { int enzyme; };
double f(double) __attribute__((noinline, enzyme("gradient", f_grad), cold));
#define RULE(k, g) __attribute__((enzyme(k, g)))
#define GRAD(g) __attribute__((enzyme("forward", \\
    g)))
'''
    uses = attributes._find_attributes("x.c", text)
    assert [(u.kind, u.expr, u.line, u.in_macro) for u in uses] == [
        ("gradient", "f_grad", 6, False), (None, "g", 7, True), ("forward", "g", 8, True)]


def test_find_attributes_with_crlf_line_endings_and_continuations():
    text = ('#define G(g) \\\r\n  __attribute__((enzyme("forward", \\\r\n g)))\r\n'
            'double h(double) __attribute__((enzyme("gradient", hg)));\r\n')
    uses = attributes._find_attributes("x.c", text)
    assert [(u.kind, u.expr, u.line, u.in_macro) for u in uses] == [
        ("forward", "g", 2, True), ("gradient", "hg", 4, False)]
    cleaned = attributes.rewrite(text, uses, {u: i for i, u in enumerate(uses)}, keep_marker=False)
    assert cleaned == ('#define G(g) \\\r\n  __attribute__((\\\r\n))\r\n'
                       'double h(double) __attribute__(());\r\n')


def test_attribute_with_unknown_kind_is_an_error():
    with pytest.raises(EnzymeBuildError, match='unknown enzyme attribute kind "gradinet"'):
        attributes._find_attributes("x.c", 'double f(double) __attribute__((enzyme("gradinet", g)));')


def test_rewrite_keeps_line_numbers():
    text = 'int a;\ndouble f(double) __attribute__((enzyme("gradient",\n   f_grad)));\nint b;\n'
    uses = attributes._find_attributes("x.c", text)
    numbering = {uses[0]: 0}
    for keep in (True, False):
        out = attributes.rewrite(text, uses, numbering, keep_marker=keep)
        assert out.count("\n") == text.count("\n")
        assert "enzyme(" not in out
        assert out.splitlines()[-1] == "int b;"
    marked = attributes.rewrite(text, uses, numbering, keep_marker=True)
    assert 'annotate("enzyme_build", "enzyme_build_marker:0",' in marked


@pytest.mark.parametrize("kind, primal, shape", [
    ("augment", ("double", ["double"]), (1, "struct")),
    ("augment", ("void", ["const double *", "double *", "int"]), (5, "pointer")),
    ("gradient", ("double", ["double", "double"]), (4, "struct")),
    ("gradient", ("double", ["double *", "int"]), (5, "void")),
    ("gradient", ("void", ["double", "double *"]), (4, "float")),
    ("forward", ("double", ["double", "int", "double *"]), (5, "struct")),
    ("forward", ("double", ["my_real"]), None),
])
def test_expected_rule_shape(kind, primal, shape):
    assert attributes.expected_rule_shape(kind, *primal) == shape


def test_split_function_type():
    assert attributes.split_function_type("double (double, double *)") == ("double", ["double", "double *"])
    assert attributes.split_function_type("void (void)") == ("void", [])
    assert attributes.split_function_type("double *(double (*)(double), int)") == \
        ("double *", ["double (*)(double)", "int"])
    assert attributes.split_function_type("int (const char *, ...)") is None


# --- compiling through the wrapper ----------------------------------------------------


def _pairs(module_text: str, prefix: str = "@__enzyme_build_rule_") -> list[str]:
    return sorted(line.split(" = ")[1].split("global ")[1].split(", !dbg")[0]
                  for line in module_text.splitlines() if line.startswith(prefix))


def test_rule_on_declaration_in_header_included_by_two_tus(work):
    write(work, "sq.h", HEADER)
    write(work, "a.c", '#include "sq.h"\ndouble a(double x) { return sq(x) + 1; }\n')
    write(work, "b.c", '#include "sq.h"\nint b(void) { return 2; }\n')  # never calls sq
    for name in ("a", "b"):
        proc = wrapper_cc(work, "-O2", "-c", f"{name}.c", "-o", f"{name}.o")
        assert proc.returncode == 0, proc.stderr
        assert "enzyme" not in proc.stderr
    module = linked_ir(work, "a.o", "b.o")
    # one weak definition per (kind, f, rule), merged across the two TUs
    assert _pairs(module) == ["[2 x ptr] [ptr @sq, ptr @sq_aug], align 16",
                              "[2 x ptr] [ptr @sq, ptr @sq_grad], align 16"]
    registry_rules = _registry_without_bodies(module)
    assert (registry_rules["sq"].augment, registry_rules["sq"].gradient) == ("sq_aug", "sq_grad")


def _registry_without_bodies(module: str):
    """The rules as collect sees them, with stub bodies so 'defined' checks pass."""
    stubs = "\n".join(f"define void @{name}() {{\n  ret void\n}}" for name in
                      ("sq_aug", "sq_grad", "f_fwd", "g_grad", "g_aug"))
    text = "\n".join(line for line in module.splitlines() if not line.startswith(
        ("declare void @sq_aug", "declare double @sq_grad", "declare { ptr, double } @sq_aug")))
    return collect_registry(text + "\n" + stubs, check_signatures=False).rules


def test_rule_on_definition_and_attribute_before_declarator(work):
    write(work, "d.c", """\
typedef struct { double primal, tangent; } pair_t;
pair_t f_fwd(double x, double dx);
__attribute__((enzyme("forward", f_fwd))) double f(double x) { return x * x; }
pair_t f_fwd(double x, double dx) { pair_t r = {x * x, 10 * dx}; return r; }
""")
    proc = wrapper_cc(work, "-O0", "-g", "-c", "d.c", "-o", "d.o")
    assert proc.returncode == 0, proc.stderr
    module = linked_ir(work, "d.o")
    assert _pairs(module) == ["[2 x ptr] [ptr @f, ptr @f_fwd], align 16"]
    assert collect_registry(module).rules["f"].forward == "f_fwd"


def test_rule_for_function_defined_in_another_tu_and_separate_attributes(work):
    write(work, "g.c", "double g(double x) { return x * 3; }\n")
    write(work, "ga.c", """\
typedef struct { void *tape; double primal; } aug_t;
aug_t g_aug(double x);
double g(double x) __attribute__((enzyme("augment", g_aug)));
aug_t g_aug(double x) { aug_t r = {0, 3 * x}; return r; }
""")
    write(work, "gg.c", """\
double g_grad(double x, double dret, void *tape) { return 7 * dret; }
extern double g(double) __attribute__((enzyme("gradient", g_grad)));
""")
    for name in ("g", "ga", "gg"):
        proc = wrapper_cc(work, "-O2", "-c", f"{name}.c", "-o", f"{name}.o")
        assert proc.returncode == 0, proc.stderr
    registry = collect_registry(linked_ir(work, "g.o", "ga.o", "gg.o"))
    rule = registry.rules["g"]
    assert (rule.augment, rule.gradient, rule.forward) == ("g_aug", "g_grad", None)


def test_attribute_from_macro_and_under_werror(work):
    write(work, "m.h", '#define GRADIENT(g) __attribute__((enzyme("augment", g##_aug), '
                       'enzyme("gradient", g##_grad)))\n'
                       '#define RULE(kind, g) __attribute__((enzyme(kind, g)))\n'
                       '#define UNUSED_RULE(g) __attribute__((enzyme("forward", g)))\n')
    write(work, "m.c", """\
#include "m.h"
typedef struct { void *tape; double primal; } aug_t;
typedef struct { double primal, tangent; } pair_t;
aug_t h_aug(double x);
double h_grad(double x, double dret, void *tape);
pair_t k_fwd(double x, double dx);
double h(double x) GRADIENT(h);
double k(double x) RULE("forward", k_fwd);
double use(double x) { return h(x) + k(x); }
""")
    proc = wrapper_cc(work, "-O2", "-Wall", "-Werror", "-c", "m.c", "-o", "m.o")
    assert proc.returncode == 0, proc.stderr
    assert _pairs(linked_ir(work, "m.o")) == ["[2 x ptr] [ptr @h, ptr @h_aug], align 16",
                                               "[2 x ptr] [ptr @h, ptr @h_grad], align 16",
                                               "[2 x ptr] [ptr @k, ptr @k_fwd], align 16"]


def test_unrelated_identifier_named_enzyme_keeps_compiling(work):
    write(work, "u.c", """\
struct config { int enzyme; };
static int enzyme = 3;
int enzyme_count(int enzyme_) { return enzyme_ + enzyme; }
int get(struct config *c) { return c->enzyme + enzyme_count(1); }
""")
    write(work, "v.c", "int enzyme(int x) { return x + 1; }\nint w(void) { return enzyme(2); }\n")
    for name in ("u", "v"):
        proc = wrapper_cc(work, "-O2", "-Wall", "-Werror", "-c", f"{name}.c", "-o", f"{name}.o")
        assert proc.returncode == 0, proc.stderr
        assert (work / f"{name}.o").exists()


def test_cxx_rule_on_namespaced_function(work):
    write(work, "n.cc", """\
namespace phys {
double pot(double r);
float pot(float r);
}
struct aug_t { void *tape; double primal; };
aug_t pot_aug(double r);
double pot_grad(double r, double dret, void *tape);
namespace phys {
double pot(double r) __attribute__((enzyme("augment", pot_aug), enzyme("gradient", pot_grad)));
}
double use(double x) { return phys::pot(x); }
""")
    proc = run([attributes_driver_cxx(), "-O2", "-c", "n.cc", "-o", "n.o"], work)
    assert proc.returncode == 0, proc.stderr
    pairs = _pairs(linked_ir(work, "n.o"))
    assert pairs == ["[2 x ptr] [ptr @_ZN4phys3potEd, ptr @_Z7pot_augd], align 16",
                     "[2 x ptr] [ptr @_ZN4phys3potEd, ptr @_Z8pot_gradddPv], align 16"]


def attributes_driver_cxx() -> str:
    from custom_helpers import ENZYME_BUILD
    return ENZYME_BUILD.replace("enzyme-build", "enzyme-c++")


# --- errors ---------------------------------------------------------------------------


@pytest.mark.parametrize("source, message", [
    ('double f(double) __attribute__((enzyme("gradient", nosuch)));\n'
     'double u(double x) { return f(x); }\n', "undeclared identifier 'nosuch'"),
    ('double h(void *);\ndouble f(double) __attribute__((enzyme("gradient", h)));\n',
     "gradient rule 'h' for f (double (double)) has type double (void *): "
     "takes 1 parameter(s), expected 3 or 2"),
    ('typedef struct { double p, t; } r_t;\nr_t h(double);\n'
     'double f(double) __attribute__((enzyme("forward", h)));\n',
     "forward rule 'h' for f"),
    ('double h(double, double, void *);\ndouble (*fp)(double) __attribute__((enzyme("gradient", h)));\n',
     "is on a VarDecl"),
    ('double h(double, double, void *);\ndouble f(double) __attribute__((enzyme("reverse", h)));\n',
     'unknown enzyme attribute kind "reverse"'),
])
def test_bad_rules_fail_at_compile_time_without_output(work, source, message):
    write(work, "bad.c", source)
    (work / "bad.o").write_text("stale")
    proc = wrapper_cc(work, "-O2", "-c", "bad.c", "-o", "bad.o")
    assert proc.returncode == 1, proc.stderr
    assert message in proc.stderr
    assert "bad.c:" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (work / "bad.o").exists()


def test_compile_with_enzyme_attributes_directly_keeps_dependency_file(work):
    write(work, "inc/sq.h", HEADER)
    write(work, "s.c", '#include "sq.h"\ndouble s(double x) { return sq(x); }\n')
    command = [CLANG, "-O2", "-Iinc", "-c", "-Xclang", "-fembed-bitcode=all", "-MD", "-MF", "s.d",
               "s.c", "-o", "s.o", "-Wunknown-attributes"]
    cwd = os.getcwd()
    os.chdir(work)
    try:
        first = run(command, work)
        assert attributes.mentions_enzyme_attribute(first.stderr)
        proc = attributes.compile_with_enzyme_attributes(command, "s.c", "s.o", dict(os.environ))
    finally:
        os.chdir(cwd)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert (work / "s.d").read_text().split() == ["s.o:", "s.c", "inc/sq.h"]


def test_source_mentions_enzyme_attribute_sees_headers_under_w(work):
    write(work, "inc/sq.h", HEADER)
    write(work, "s.c", '#include "sq.h"\ndouble s(double x) { return sq(x); }\n')
    write(work, "t.c", 'int enzyme(int x);\nint t(void) { return enzyme(1); }\n')
    command = [CLANG, "-O2", "-Iinc", "-w", "-c", "SRC", "-o", "x.o"]
    cwd = os.getcwd()
    os.chdir(work)
    try:
        found = [attributes.source_mentions_enzyme_attribute(
            [a if a != "SRC" else src for a in command], src, dict(os.environ)) for src in ("s.c", "t.c")]
    finally:
        os.chdir(cwd)
    assert found == [True, False]


@pytest.mark.parametrize("chunk_size", [5, 64, 1 << 20])
def test_ast_scan_finds_marked_declarations_across_chunks(work, chunk_size):
    import io
    import json as jsonlib
    write(work, "ast.c", """\
#include <math.h>
double h_grad(double, double, void *);
double before(double x);
double h(double x) __attribute__((annotate("enzyme_build", "enzyme_build_marker:3", "gradient", h_grad)));
double after(double x) { return sin(x); }
""")
    proc = run([CLANG, "-fsyntax-only", "-Xclang", "-ast-dump=json", "ast.c"], work)
    assert proc.returncode == 0, proc.stderr
    decls = list(attributes._top_level_decls(io.BytesIO(proc.stdout.encode()), chunk_size))
    assert [jsonlib.loads(d)["name"] for d in decls] == ["h"]
    targets, misplaced = attributes.find_rule_targets(io.BytesIO(proc.stdout.encode()))
    assert misplaced == {}
    (target,) = targets[3]
    assert (target.kind, target.function, target.rule_name) == ("gradient", "h", "h_grad")
    assert target.rule_type == "double (double, double, void *)"


def test_standard_attribute_syntax(work):
    write(work, "std.cc", """\
struct aug_t { void *tape; double primal; };
aug_t s_aug(double x);
double s_grad(double x, double dret, void *tape);
[[enzyme("augment", s_aug), gnu::cold]] double s(double x);
double s [ [enzyme("gradient", s_grad)] ] (double x);
double use(double x) { return s(x); }
""")
    proc = run([attributes_driver_cxx(), "-O2", "-std=c++17", "-c", "std.cc", "-o", "std.o"], work)
    assert proc.returncode == 0, proc.stderr
    assert "enzyme" not in proc.stderr
    assert _pairs(linked_ir(work, "std.o")) == [
        "[2 x ptr] [ptr @_Z1sd, ptr @_Z5s_augd], align 16",
        "[2 x ptr] [ptr @_Z1sd, ptr @_Z6s_gradddPv], align 16"]
