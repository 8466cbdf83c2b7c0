"""An export spec checked against the real C signature: each parameter's role in the bindings.

Roles: `in` (const float array), `out` (non-const float array, allocated by the caller of
the binding), `inout` (a float array read and overwritten), `index` (const integer array,
not differentiated), `length` (an integer inferred from an array's size), `int` (an
integer the user passes), `scalar` (a float passed by value, differentiated).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import EnzymeBuildError
from .signature import FLOAT_TYPES, INT_TYPES, CSignature, CType
from .spec import ExportSpec, Length

ARRAY_ROLES = ("in", "out", "inout", "index")
DIFFERENTIABLE_ROLES = ("in", "out", "inout", "scalar")


@dataclass(frozen=True)
class Param:
    name: str
    role: str
    ctype: CType
    length: Length | None = None
    source: str | None = None  # for `length`: the array whose size gives the value

    @property
    def dtype(self) -> str:
        base = self.ctype.base
        return FLOAT_TYPES.get(base) or INT_TYPES[base][1]

    @property
    def ctypes_name(self) -> str:
        return INT_TYPES[self.ctype.base][0]

    @property
    def differentiable(self) -> bool:
        return self.role in DIFFERENTIABLE_ROLES


@dataclass(frozen=True)
class Binding:
    function: str
    result: CType
    params: tuple[Param, ...]
    spec: ExportSpec

    @property
    def python_inputs(self) -> list[Param]:
        return [p for p in self.params if p.role in ("in", "inout", "index", "int", "scalar")]

    @property
    def array_outputs(self) -> list[Param]:
        return [p for p in self.params if p.role in ("out", "inout")]

    @property
    def float_result(self) -> bool:
        return self.result.kind == "float"


def _error(spec: ExportSpec, signature: CSignature, message: str, hint: str) -> EnzymeBuildError:
    return EnzymeBuildError(f"--export '{spec.text}': {message}", location=signature.location, hint=hint)


def bind(spec: ExportSpec, signature: CSignature) -> Binding:
    """Check `spec` against `signature` and give every parameter its role."""
    c_names = ", ".join(f"{p.type.spelling} {p.name}" for p in signature.params)
    prototype = f"{signature.result.spelling} {signature.name}({c_names})"
    if len(spec.params) != len(signature.params):
        listed = ", ".join(p.name for p in spec.params) or "none"
        raise _error(spec, signature,
                     f"{signature.name} takes {len(signature.params)} parameter(s) but the spec lists "
                     f"{len(spec.params)} ({listed}); the C declaration is {prototype}",
                     "list every C parameter, in order")
    if signature.result.kind in ("unsupported", "pointer"):
        raise _error(spec, signature,
                     f"{signature.name} returns {signature.result.spelling}, which a package cannot bind",
                     "return void, an integer, float or double (write results through a pointer parameter)")
    integers = {c.name for c in signature.params if c.type.kind == "int"}
    params: list[Param] = []
    for position, (wanted, actual) in enumerate(zip(spec.params, signature.params), 1):
        ctype = actual.type
        where = f"parameter {position} '{wanted.name}'"
        if not actual.name.startswith("#") and wanted.name != actual.name:
            raise _error(spec, signature,
                         f"{where} is named '{actual.name}' in C ({ctype.spelling} {actual.name})",
                         f"use the C names in order: {signature.name}({', '.join(c.name for c in signature.params)})")
        if ctype.kind == "unsupported" or ctype.kind == "void":
            raise _error(spec, signature, f"{where} has type {ctype.spelling}, which a package cannot bind",
                         "bind pointers to float/double/integers, floats, doubles and integers; "
                         "export a wrapper with such parameters")
        if ctype.kind == "pointer":
            if wanted.length is None:
                raise _error(spec, signature,
                             f"{where} is a pointer ({ctype.spelling}) but the spec gives no length",
                             f"give its length as an expression of integer parameters, e.g. {wanted.name}[n]")
            for name in sorted(wanted.length.names()):
                if name not in integers:
                    what = "is not a parameter" if name not in {c.name for c in signature.params} \
                        else "is not an integer parameter"
                    raise _error(spec, signature, f"the length of '{wanted.name}' uses '{name}', which {what}",
                                 f"write {wanted.name}'s length with integer parameters of {signature.name} and literals")
            if ctype.base in FLOAT_TYPES:
                if wanted.inout and ctype.const:
                    raise _error(spec, signature, f"{where} is {ctype.spelling}, so it cannot be inout",
                                 f"drop 'inout:' (a const pointer is an input)")
                role = "in" if ctype.const else ("inout" if wanted.inout else "out")
            else:
                if not ctype.const:
                    raise _error(spec, signature,
                                 f"{where} is {ctype.spelling}: integer arrays are bound as inputs only",
                                 f"declare it const {ctype.base} * (or export a wrapper)")
                if wanted.inout:
                    raise _error(spec, signature, f"{where} is an integer input array; it cannot be inout",
                                 "drop 'inout:'")
                role = "index"
            params.append(Param(wanted.name, role, ctype, wanted.length))
        else:
            if wanted.length is not None:
                raise _error(spec, signature, f"{where} is {ctype.spelling}, not a pointer, so it has no length",
                             f"write it without brackets: {wanted.name}")
            if wanted.inout:
                raise _error(spec, signature, f"{where} is a scalar; only arrays can be inout", "drop 'inout:'")
            params.append(Param(wanted.name, "scalar" if ctype.kind == "float" else "int", ctype))
    # an integer is inferred from the first input array whose length is exactly that integer
    inferred = []
    for param in params:
        if param.role == "int":
            source = next((p.name for p in params if p.role in ("in", "inout", "index")
                           and p.length.tree == ("name", param.name)), None)
            if source is not None:
                param = Param(param.name, "length", param.ctype, source=source)
        inferred.append(param)
    return Binding(signature.name, signature.result, tuple(inferred), spec)
