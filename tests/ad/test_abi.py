"""Enzyme's C ABI on its own (enzyme_build/ad/abi.py): entry points, the one Signature of every
mode, and the call-site parsers of reverse/split and forward mode on hand-written call sites;
plus the import layering of the engine's packages (no cycles)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from enzyme_build.ad.abi import (ACTIVE, CONST, DUP, OUT, Signature, marker_kind, parse_forward_call,
                                 parse_reverse_call)
from enzyme_build.ad.engine import Engine
from enzyme_build.custom.registry import Registry
from enzyme_build.errors import EnzymeBuildError
from enzyme_build.ir.model import parse_module

MODULE = """
define double @f(double %x, ptr %p, i32 %n) {
entry:
  ret double %x
}
@enzyme_dup = external global i32
@enzyme_const = external global i32
@enzyme_out = external global i32
@enzyme_width = external global i32
@enzyme_not_overwritten = external global i32
declare double @__enzyme_autodiff.site0(ptr, ...)
declare ptr @__enzyme_augmentfwd.site1(ptr, ...)
declare double @__enzyme_fwddiff.site2(ptr, ...)
define void @use(double %x, float %y, ptr %p, ptr %dp, i32 %n) {
entry:
  %a = call double (ptr, ...) @__enzyme_autodiff.site0(ptr @f, float %y, ptr %p, ptr %dp, i32 %n)
  %b = call ptr (ptr, ...) @__enzyme_augmentfwd.site1(ptr @f, double %x, ptr @enzyme_not_overwritten, ptr @enzyme_dup, ptr %p, ptr %dp, ptr @enzyme_const, i32 %n)
  %c = call double (ptr, ...) @__enzyme_fwddiff.site2(ptr @f, ptr @enzyme_width, i32 2, double %x, double 1.0, double 0.0, ptr @enzyme_dup, ptr %p, ptr %dp, ptr %dp, i32 %n)
  %d = call double (ptr, ...) @__enzyme_autodiff.site0(ptr @f, double %x, ptr @enzyme_out, ptr %p, i32 %n)
  %e = call double (ptr, ...) @__enzyme_fwddiff.site2(ptr @f, double %x, double 1.0, ptr %p, ptr %dp, i32 %n, i32 %n)
  %g = call double (ptr, ...) @__enzyme_fwddiff.site2(ptr @f, ptr @enzyme_out, double %x, ptr %p, ptr %dp, i32 %n)
  ret void
}
"""


@pytest.fixture(scope="module")
def sites():
    module = parse_module(MODULE)
    fn = module.functions["use"]
    engine = Engine(module, Registry())
    by_result = {i.result: i for i in fn.instructions() if i.result}
    return engine, fn, by_result


def _fresh():
    counter = [0]

    def fresh():
        counter[0] += 1
        return f"%t{counter[0]}"
    return fresh


def test_entry_points_are_found_in_site_names():
    assert marker_kind("@__enzyme_autodiff.site3") == "__enzyme_autodiff"
    assert marker_kind('@"__enzyme_fwddiff_vec4"') == "__enzyme_fwddiff"
    assert marker_kind("@enzyme_dup") is None and marker_kind(None) is None


def test_one_signature_for_every_mode():
    reverse = Signature("f", (OUT, DUP, CONST), True)
    forward = Signature("f", (ACTIVE, DUP, CONST), mode="forward", width=4)
    assert reverse.code() == "odcr" and forward.code() == "adcw4"
    assert Signature("f", (DUP,), stable_args=(True,)).code() == "dk1"
    # the same activities in two modes are two specializations
    assert Signature("g", (DUP,)) != Signature("g", (DUP,), mode="forward")


def test_reverse_call_defaults_and_conversions(sites):
    engine, fn, insts = sites
    call = parse_reverse_call(engine, fn, insts["%a"], _fresh())
    assert call.primal.name == "f" and call.sig == Signature("f", (OUT, DUP, CONST), True)
    assert call.lines == ["  %t1 = fpext float %y to double"]   # a float argument for a double parameter
    assert call.passed == ["double %t1", "ptr %p", "ptr %dp", "i32 %n"]


def test_split_call_keeps_the_not_overwritten_promise(sites):
    engine, fn, insts = sites
    call = parse_reverse_call(engine, fn, insts["%b"], _fresh())
    assert call.sig.args == (OUT, DUP, CONST) and call.sig.stable_args == (False, True, False)


def test_reverse_call_errors_name_the_parameter(sites):
    engine, fn, insts = sites
    with pytest.raises(EnzymeBuildError, match=r"enzyme_out on parameter 2 \(ptr\) of @f, which is a pointer"):
        parse_reverse_call(engine, fn, insts["%d"], _fresh())


def test_forward_call_with_width(sites):
    engine, fn, insts = sites
    call = parse_forward_call(engine, fn, insts["%c"], _fresh())
    assert call.sig == Signature("f", (ACTIVE, DUP, CONST), mode="forward", width=2)
    assert call.passed == ["double %x", "double 1.0", "double 0.0", "ptr %p", "ptr %dp", "ptr %dp", "i32 %n"]


def test_forward_call_errors(sites):
    engine, fn, insts = sites
    with pytest.raises(EnzymeBuildError, match=r"too many arguments .* %n is left over"):
        parse_forward_call(engine, fn, insts["%e"], _fresh())
    with pytest.raises(EnzymeBuildError, match=r"enzyme_out .* is a reverse-mode marker"):
        parse_forward_call(engine, fn, insts["%g"], _fresh())


# ---------------------------------------------------------------- layering

PACKAGE = Path(__file__).resolve().parents[2] / "enzyme_build"


def _imports(path: Path, module: str) -> set[str]:
    """enzyme_build modules `path` imports (at module level or inside functions)."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_the_engine_packages_have_no_import_cycles():
    modules = {}
    for sub in ("ad", "analysis", "ir", "custom"):
        for path in (PACKAGE / sub).rglob("*.py"):
            name = ".".join(("enzyme_build",) + path.relative_to(PACKAGE).with_suffix("").parts)
            modules[name.removesuffix(".__init__")] = path
    graph = {m: {t for t in _imports(p, m) if t in modules and t != m} for m, p in modules.items()}

    def reaches(start, target, seen):
        for nxt in graph[start]:
            if nxt == target or (nxt not in seen and not seen.add(nxt) and reaches(nxt, target, seen)):
                return True
        return False
    cyclic = sorted(m for m in graph if reaches(m, m, set()))
    assert not cyclic, f"import cycles through {cyclic}"
