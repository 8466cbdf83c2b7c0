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


def _helper_name(name: str, precision: str) -> str:
    return f"eb_{name}_{precision}"


_REAL = {"d": "double", "s": "float", "l": "long double"}
_LIBM_SUFFIX = {"d": "", "s": "f", "l": "l"}


def _function(symbol: str, entry: Entry, precision: str, *, helper: bool = False) -> str:
    t = _REAL[precision]
    suffix = _LIBM_SUFFIX[precision]
    ct = f"{t} _Complex"
    params = {"c": f"{ct} z", "cc": f"{ct} z, {ct} w", "rrrr": f"{t} a, {t} b, {t} c, {t} d"}[entry.args]
    unpack = {"c": f"{t} x = __real__ z, y = __imag__ z;",
              "cc": f"{t} x = __real__ z, y = __imag__ z, u = __real__ w, v = __imag__ w;",
              "rrrr": ""}[entry.args]
    # float complex travels as `<2 x float>`, which the engine differentiates only when it
    # does not cross a call: the float functions are inlined into their callers
    if helper:
        attrs, name = "static inline __attribute__((always_inline))", _helper_name(entry.double, precision)
    else:
        attrs = '__attribute__((visibility("hidden")))' + (" __attribute__((always_inline))" if precision == "s" else "")
        name = entry_name(symbol)
    body = entry.body.replace("$T", t).replace("$C", ct)
    if precision == "l":   # constants and builtins of the body in long double
        body = body.replace("__builtin_inf()", "__builtin_infl()")
    body = re.sub(r"\$F\((\w+)\)", lambda m: m.group(1) + suffix, body)
    body = re.sub(r"\$L\((\w+)\)", lambda m: _helper_name(m.group(1), precision), body)
    if entry.result == "c":
        return (f"{attrs} {ct} {name}({params}) {{\n"
                f"  {unpack} {t} re, im;\n  {body.strip()}\n  return __builtin_complex(re, im);\n}}\n")
    if entry.result == "z":
        return (f"{attrs} {ct} {name}({params}) {{\n"
                f"  {unpack} {ct} res;\n  {body.strip()}\n  return res;\n}}\n")
    return (f"{attrs} {t} {name}({params}) {{\n"
            f"  {unpack} {t} r;\n  {body.strip()}\n  return r;\n}}\n")


def _helpers(selected) -> list[tuple[Entry, str]]:
    """Table entries the selected bodies call through `$L(name)`, transitively, in table order."""
    from .table import BY_DOUBLE, ENTRIES
    needed: set[tuple[str, str]] = set()
    work = [(e, p) for _s, e, p in selected]
    while work:
        entry, precision = work.pop()
        for name in re.findall(r"\$L\((\w+)\)", entry.body):
            if (name, precision) not in needed:
                needed.add((name, precision))
                work.append((BY_DOUBLE[name], precision))
    return [(e, p) for e in ENTRIES for p in ("d", "s", "l") if (e.double, p) in needed]


def library_source(selected: list[tuple[str, Entry, str]]) -> str:
    """The C source for these (symbol, entry, precision) triples."""
    head = ("/* enzyme-build complex library (generated; see enzyme_build/complex/table.py) */\n"
            "#include <math.h>\n")
    helpers = [_function(e.double, e, p, helper=True) for e, p in _helpers(selected)]
    return head + "\n".join(helpers + [_function(s, e, p) for s, e, p in selected])
