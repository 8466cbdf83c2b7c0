"""C source of the complex library, generated from the table: one function
`__enzyme_complex_<symbol>` per symbol the program uses, with the C99 prototype of the
symbol it replaces (so clang gives it the same calling convention: `{double, double}`
for double complex, `<2 x float>` for float complex on x86-64)."""
from __future__ import annotations

import re

from .table import Entry

PREFIX = "__enzyme_complex_"


def entry_name(symbol: str) -> str:
    return PREFIX + symbol


def _function(symbol: str, entry: Entry, precision: str) -> str:
    t = "double" if precision == "d" else "float"
    suffix = "" if precision == "d" else "f"
    ct = f"{t} _Complex"
    params = {"c": f"{ct} z", "cc": f"{ct} z, {ct} w", "rrrr": f"{t} a, {t} b, {t} c, {t} d"}[entry.args]
    unpack = {"c": f"{t} x = __real__ z, y = __imag__ z;",
              "cc": f"{t} x = __real__ z, y = __imag__ z, u = __real__ w, v = __imag__ w;",
              "rrrr": ""}[entry.args]
    # float complex travels as `<2 x float>`, which the engine differentiates only when it
    # does not cross a call: the float functions are inlined into their callers
    attrs = '__attribute__((visibility("hidden")))' + (" __attribute__((always_inline))" if precision == "s" else "")
    body = entry.body.replace("$T", t)
    body = re.sub(r"\$F\((\w+)\)", lambda m: m.group(1) + suffix, body)
    if entry.result == "c":
        return (f"{attrs} {ct} {entry_name(symbol)}({params}) {{\n"
                f"  {unpack} {t} re, im;\n  {body.strip()}\n  return __builtin_complex(re, im);\n}}\n")
    return (f"{attrs} {t} {entry_name(symbol)}({params}) {{\n"
            f"  {unpack} {t} r;\n  {body.strip()}\n  return r;\n}}\n")


def library_source(selected: list[tuple[str, Entry, str]]) -> str:
    """The C source for these (symbol, entry, precision) triples."""
    head = ("/* enzyme-build complex library (generated; see enzyme_build/complex/table.py) */\n"
            "#include <math.h>\n")
    return head + "\n".join(_function(s, e, p) for s, e, p in selected)
