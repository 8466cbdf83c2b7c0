"""The real C signature of an exported function, read from clang's JSON AST (never by regex on source).

`read_signature` runs `clang -Xclang -ast-dump=json -fsyntax-only` on each source with the
user's preprocessor flags and returns the parameter and return types, desugared (typedefs
resolved), classified into the few kinds a package can bind.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass

from .. import toolchain
from ..errors import EnzymeBuildError
from .tools import run_tool

# C scalar types a package binds: spelling → (kind, ctypes name, numpy dtype name).
FLOAT_TYPES = {"double": "float64", "float": "float32"}
INT_TYPES = {
    "int": ("c_int", "int32"), "unsigned int": ("c_uint", "uint32"),
    "long": ("c_long", "int64"), "unsigned long": ("c_ulong", "uint64"),
    "long long": ("c_longlong", "int64"), "unsigned long long": ("c_ulonglong", "uint64"),
    "short": ("c_short", "int16"), "unsigned short": ("c_ushort", "uint16"),
}
QUALIFIERS = ("restrict", "__restrict", "__restrict__", "volatile")


@dataclass(frozen=True)
class CType:
    """One parameter or return type: kind is 'float', 'int', 'pointer' or 'void'."""

    spelling: str  # as clang wrote it (desugared), for messages and the shim's prototype
    kind: str
    base: str  # the scalar type, or the pointee's ("double" for `const double *`)
    const: bool = False  # pointee is const (pointers only)

    @property
    def float_pointee(self) -> bool:
        return self.kind == "pointer" and self.base in FLOAT_TYPES


@dataclass(frozen=True)
class CParam:
    name: str
    type: CType


@dataclass(frozen=True)
class CSignature:
    name: str
    result: CType
    params: tuple[CParam, ...]
    location: str  # "file.c:12"


def _normalize(words: str) -> str:
    tokens = [w for w in words.replace("*", " * ").split() if w not in QUALIFIERS]
    if tokens[:1] == ["signed"] and len(tokens) > 1:
        tokens = tokens[1:]
    text = " ".join(tokens)
    for long_form, short_form in (("long int", "long"), ("short int", "short"),
                                  ("unsigned long long int", "unsigned long long"),
                                  ("long long int", "long long"), ("unsigned", "unsigned int")):
        if text == long_form:
            return short_form
    return text


def classify(spelling: str) -> CType | None:
    """The CType of a desugared type spelling, or None when a package cannot bind it."""
    text = " ".join(w for w in spelling.split() if w not in QUALIFIERS)
    if text.count("*") > 1 or "(" in text or "[" in text or "struct" in text.split() \
            or "union" in text.split() or "enum" in text.split():
        return None
    if text.endswith("*"):
        pointee = text[:-1].split()
        const = "const" in pointee
        base = _normalize(" ".join(w for w in pointee if w != "const"))
        if base in FLOAT_TYPES or base in INT_TYPES:
            return CType(spelling, "pointer", base, const)
        return None
    base = _normalize(" ".join(w for w in text.split() if w != "const"))
    if base == "void":
        return CType(spelling, "void", base)
    if base in FLOAT_TYPES:
        return CType(spelling, "float", base)
    if base in INT_TYPES:
        return CType(spelling, "int", base)
    return None


def _type_text(node: dict) -> str:
    type_info = node.get("type", {})
    return type_info.get("desugaredQualType", type_info.get("qualType", ""))


def _json_objects(text: str):
    decoder = json.JSONDecoder()
    position = 0
    while True:
        while position < len(text) and text[position].isspace():
            position += 1
        if position >= len(text):
            return
        value, position = decoder.raw_decode(text, position)
        yield value


def _ast_declarations(source: str, function: str, cflags: list[str], kind: str = "FunctionDecl") -> list[dict]:
    cxx = os.path.splitext(source)[1] not in (".c", ".i", ".h")
    argv = toolchain.clang_command(cxx=cxx) + [
        "-fsyntax-only", "-Qunused-arguments", "-w", "-Xclang", "-ast-dump=json",
        "-Xclang", f"-ast-dump-filter={function}", *cflags, source]
    proc = run_tool(argv)
    if proc.returncode != 0:
        diagnostics = proc.stderr.strip() or f"clang exited with status {proc.returncode}"
        raise EnzymeBuildError(f"cannot read the declarations of {source}:\n{diagnostics}",
                               hint="fix the compile error above (pass -I/-D flags the sources need)")
    return [node for node in _json_objects(proc.stdout)
            if node.get("kind") == kind and node.get("name") == function]


KEYWORDS = {"const", "volatile", "restrict", "__restrict", "__restrict__", "signed", "unsigned",
            "char", "short", "int", "long", "float", "double", "void", "_Bool", "struct", "union",
            "enum", "*"}


def _desugar(spelling: str, source: str, cflags: list[str], depth: int = 0) -> str:
    """`spelling` with typedef names replaced by what they name (clang's JSON desugars only
    the outermost type, so `const real *` keeps `real`)."""
    words = spelling.replace("*", " * ").split()
    unknown = [w for w in words if w not in KEYWORDS and re.fullmatch(r"[A-Za-z_]\w*", w)]
    if not unknown or depth > 8:
        return spelling
    resolved = []
    for word in words:
        if word in unknown:
            found = _ast_declarations(source, word, cflags, kind="TypedefDecl")
            if found:
                word = _type_text(found[0])
        resolved.append(word)
    result = " ".join(resolved)
    return result if result == " ".join(words) else _desugar(result, source, cflags, depth + 1)


def _location(source: str, node: dict) -> str:
    line = node.get("loc", {}).get("line")
    file = node.get("loc", {}).get("file", source)
    return f"{file}:{line}" if line else file


def read_signature(function: str, sources: list[str], cflags: list[str]) -> CSignature:
    """The signature of `function` as declared in the first source that declares it."""
    for source in sources:
        declarations = _ast_declarations(source, function, cflags)
        if not declarations:
            continue
        # the definition when the source has one, else its prototype
        node = next((d for d in declarations if any(c.get("kind") == "CompoundStmt"
                                                     for c in d.get("inner", []))), declarations[0])
        location = _location(source, node)
        if node.get("storageClass") == "static":
            raise EnzymeBuildError(f"function '{function}' is static, so the library cannot export it",
                                   location=location, hint=f"remove 'static' from {function}'s definition")
        if node.get("mangledName", function) != function:
            raise EnzymeBuildError(f"function '{function}' has C++ linkage (symbol {node['mangledName']})",
                                   location=location, hint=f'declare it extern "C"')
        params = []
        for index, child in enumerate(c for c in node.get("inner", []) if c.get("kind") == "ParmVarDecl"):
            spelling = _desugar(_type_text(child), source, cflags)
            params.append(CParam(child.get("name") or f"#{index + 1}", classify(spelling)
                                 or CType(spelling, "unsupported", spelling)))
        function_type = _type_text(node)
        result_spelling = _desugar(function_type.split("(", 1)[0].strip(), source, cflags)
        if "..." in function_type:
            raise EnzymeBuildError(f"function '{function}' is variadic; a package binds fixed parameters only",
                                   location=location, hint="export a fixed-argument wrapper instead")
        result = classify(result_spelling) or CType(result_spelling, "unsupported", result_spelling)
        return CSignature(function, result, tuple(params), location)
    names = ", ".join(sources)
    raise EnzymeBuildError(f"function '{function}' is not declared in {names}",
                           hint="check the name in --export, or add the source file that defines it")
