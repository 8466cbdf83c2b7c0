"""Complex arithmetic as a library of C bodies (see docs/complex.md).

`attach_complex_rules(text)` is the hook the AD stage calls on the whole-program module
next to the BLAS one: when the module declares (without a body) clang's complex runtime
calls (`__muldc3`, `__divdc3`, `__mulsc3`, `__divsc3`) or C99 complex libm functions the
table covers (`cabs`, `cexp`, `clog`, `csqrt`, `cpow`, `csin`, ...), their calls are
renamed to `__enzyme_complex_<name>`, functions with bodies written as real arithmetic on
the parts (generated from `table.py`, compiled once by clang and cached like the BLAS
library), which are linked in; the engine differentiates them natively. Programs that use
none of them are returned unchanged.
"""
from __future__ import annotations

import os
import re

from .generate import entry_name, library_source
from .table import known_names

_NAME_CHARS = r"[-a-zA-Z$._0-9]"
_DECLARE_RE = re.compile(r"^declare [^\n@]*@([A-Za-z0-9_]+)\(", re.MULTILINE)
_DEFINE_RE = re.compile(r"^define [^\n@]*@([A-Za-z0-9_]+)\(", re.MULTILINE)
_TRIPLE_RE = re.compile(r'^target triple = "([^"]+)"', re.MULTILINE)
_memo: dict[str, bytes] = {}
# no vectorizers: float complex values are `<2 x float>` on x86-64 and the engine wants the
# parts as scalars (SLP would pack the inf/nan recovery's arithmetic into vectors)
# -fcx-limited-range: the "z" bodies' complex `*` and `/` are the naive formulas, inline
_FLAGS = ("-x", "c", "-std=gnu11", "-O2", "-ffp-contract=off", "-fno-slp-vectorize", "-fno-vectorize",
          "-fcx-limited-range",
          "-fPIC", "-w", "-c", "-emit-llvm")


def referenced_functions(text: str) -> list[str]:
    """Table symbols the module declares without defining."""
    known = known_names()
    declared = {m.group(1) for m in _DECLARE_RE.finditer(text)} & set(known)
    declared -= {m.group(1) for m in _DEFINE_RE.finditer(text)}
    return sorted(declared)


def attach_complex_rules(text: str) -> str:
    """The module with its complex runtime/libm calls routed through the library (or unchanged)."""
    symbols = referenced_functions(text)
    if not symbols:
        return text
    from .. import llvm
    known = known_names()
    for symbol in symbols:
        text = re.sub(rf"@{re.escape(symbol)}(?!{_NAME_CHARS})", "@" + entry_name(symbol), text)
    triple = _TRIPLE_RE.search(text)
    library = library_module([(s, *known[s]) for s in symbols], triple.group(1) if triple else None)
    module = llvm.parse_assembly(text, "program")
    return llvm.link_modules([module, library]).text()


def library_module(selected, triple: str | None = None):
    """The compiled library for these (symbol, entry, precision) triples, parsed: from
    this process's memo, else the cache directory (keyed by the hash of source and
    compiler), else clang."""
    from ..files import KEEP_VAR, keep_directory, replace_atomically
    from ..rulelib import compiled_library
    source = library_source(selected)
    keep = keep_directory(os.environ.get(KEEP_VAR))
    if keep:
        replace_atomically(os.path.join(keep, "complex-library.c"), source)
    return compiled_library(source, name="complex", what="complex arithmetic library", flags=_FLAGS,
                            memo=_memo, triple=triple)
