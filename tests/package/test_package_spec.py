"""The export spec parser and the checks of a spec against clang's view of the C signature."""
from __future__ import annotations

import os

import pytest

from enzyme_build.errors import EnzymeBuildError
from enzyme_build.package.binding import bind
from enzyme_build.package.signature import classify, read_signature
from enzyme_build.package.spec import evaluate, parse_export

from package_helpers import PROGRAMS

PHYSICS = os.path.join(PROGRAMS, "physics.c")


def test_parse_export_lengths_and_inout():
    spec = parse_export("g(inout:y[m*n], m, n, x[(m+1)*2 - n/2])")
    assert [p.name for p in spec.params] == ["y", "m", "n", "x"]
    assert spec.params[0].inout and spec.params[0].length.text == "m*n"
    assert evaluate(spec.params[3].length, {"m": 3, "n": 4}) == 6
    assert spec.params[1].length is None


@pytest.mark.parametrize("text, message", [
    ("f(x[n]", "expected ','"),
    ("f(x[], n)", "expected a number or a parameter name"),
    ("f x", "expected '('"),
    ("f(x, x)", "listed twice"),
    ("f(inout:x)", "needs a length"),
    ("f(x[n]) y", "unexpected 'y'"),
    ("f($x)", "unexpected character '$'"),
    ("", "empty export spec"),
])
def test_parse_export_errors(text, message):
    with pytest.raises(EnzymeBuildError) as info:
        parse_export(text)
    assert message in info.value.message


def test_signature_desugars_typedefs(tmp_path):
    source = tmp_path / "t.c"
    source.write_text("#include <stddef.h>\n#include <stdint.h>\ntypedef double real;\n"
                      "real g(const real *restrict x, size_t n, float *y, int64_t m);\n")
    signature = read_signature("g", [str(source)], [])
    kinds = [(p.name, p.type.kind, p.type.base, p.type.const) for p in signature.params]
    assert kinds == [("x", "pointer", "double", True), ("n", "int", "unsigned long", False),
                     ("y", "pointer", "float", False), ("m", "int", "long", False)]
    assert signature.result.base == "double"


def test_binding_roles_and_inferred_lengths():
    binding = bind(parse_export("gather(A[m*n], m, n, idx[m], s)"), read_signature("gather", [PHYSICS], []))
    roles = {p.name: p.role for p in binding.params}
    assert roles == {"A": "in", "m": "length", "n": "int", "idx": "index", "s": "scalar"}
    assert [p.name for p in binding.python_inputs] == ["A", "n", "idx", "s"]


@pytest.mark.parametrize("text, message", [
    ("energy(x[n], m, k)", "parameter 2 'm' is named 'n' in C"),
    ("energy(x, n, k)", "is a pointer (const double *) but the spec gives no length"),
    ("energy(x[n], n)", "takes 3 parameter(s) but the spec lists 2"),
    ("energy(x[k], n, k)", "uses 'k', which is not an integer parameter"),
    ("energy(x[n], n[2], k)", "'n' is int, not a pointer"),
    ("residual(p[n], n, r[q])", "uses 'q', which is not a parameter"),
    ("energy(inout:x[n], n, k)", "so it cannot be inout"),
])
def test_binding_errors_name_the_parameter(text, message):
    spec = parse_export(text)
    with pytest.raises(EnzymeBuildError) as info:
        bind(spec, read_signature(spec.function, [PHYSICS], []))
    assert message in info.value.message


def test_classify_rejects_what_cannot_be_bound():
    assert classify("double **") is None
    assert classify("struct point *") is None
    assert classify("int (*)(void)") is None
    assert classify("const float *").const
