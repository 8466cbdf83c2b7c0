"""BLAS derivatives as a library of custom rules (see docs/blas.md).

`attach_blas_rules(text)` is the one hook the AD stage calls on the whole-program module
before it collects registrations: when the program calls BLAS routines the table covers
(`cblas_dgemm`, `dgemm_`, ...), the calls are renamed to the library's entry points and
the rule library (C generated from `table.py`, compiled once by clang and cached by the
hash of its source) is linked in with its registration globals. Programs that call no
BLAS routine are returned unchanged.
"""
from __future__ import annotations

import os
import re

from .generate import entry_name, library_source
from .table import INACTIVE, known_names

_NAME_CHARS = r"[-a-zA-Z$._0-9]"
_DECLARE_RE = re.compile(r"^declare [^\n@]*@([a-z0-9_]+)\(", re.MULTILINE)
_DEFINE_RE = re.compile(r"^define [^\n@]*@([a-z0-9_]+)\(", re.MULTILINE)
_TRIPLE_RE = re.compile(r'^target triple = "([^"]+)"', re.MULTILINE)
_memo: dict[str, bytes] = {}


def referenced_routines(text: str) -> dict[str, tuple[str, str, str]]:
    """BLAS routines the module declares (calls without a body) that the table covers."""
    known = known_names()
    declared = {m.group(1) for m in _DECLARE_RE.finditer(text)} & set(known)
    if not declared:
        return {}
    declared -= {m.group(1) for m in _DEFINE_RE.finditer(text)}
    return {name: known[name] for name in sorted(declared)}


def declared_inactive(text: str) -> list[str]:
    """Derivative-free BLAS/LAPACK functions (table.INACTIVE) the module declares."""
    declared = {m.group(1) for m in _DECLARE_RE.finditer(text)}
    return sorted(declared & set(INACTIVE))


def rename_calls(text: str, routines) -> str:
    for symbol, (family, p, abi) in routines.items():
        text = re.sub(rf"@{re.escape(symbol)}(?!{_NAME_CHARS})", "@" + entry_name(symbol, family, p, abi), text)
    return text


def attach_blas_rules(text: str) -> str:
    """The module with its BLAS calls routed through the rule library (or unchanged)."""
    routines = referenced_routines(text)
    inactive = declared_inactive(text)
    if not routines and not inactive:
        return text
    from .. import llvm
    triple = _TRIPLE_RE.search(text)
    rules = rules_module(sorted({(f, p) for f, p, _ in routines.values()}), inactive,
                         triple.group(1) if triple else None)
    module = llvm.parse_assembly(rename_calls(text, routines), "program")
    return llvm.link_modules([module, rules]).text()


def _keep_source(source: str) -> None:
    """With ENZYME_BUILD_KEEP=dir, the generated rule library is kept as dir/blas-rules.c."""
    from ..files import KEEP_VAR, keep_directory, replace_atomically
    directory = keep_directory(os.environ.get(KEEP_VAR))
    if directory:
        replace_atomically(os.path.join(directory, "blas-rules.c"), source)


_FLAGS = ("-x", "c", "-std=gnu11", "-O2", "-fPIC", "-fvisibility=hidden", "-w", "-c", "-emit-llvm")


def rules_module(selected: list[tuple[str, str]], inactive: list[str] = (), triple: str | None = None):
    """The compiled rule library for these (family, precision) pairs, parsed: from this
    process's memo, else the cache directory (keyed by the hash of source and compiler),
    else clang. Compiled for the program's target triple. A cache entry LLVM cannot read
    is rebuilt."""
    from ..rulelib import compiled_library
    source = library_source(selected, inactive)
    _keep_source(source)
    return compiled_library(source, name="blas", what="BLAS derivative rules", flags=_FLAGS,
                            memo=_memo, triple=triple)
