"""The initial value of a shadow global.

A shadow global starts as zero, except when the global's initializer holds the address of
another writable global: `struct { double *base; long n; } desc = {data, 3};`. The shadow's
pointer must then point at the shadow of what the primal points to (`{&data', 3}`, the way
Enzyme builds shadow initializers), or the derivative follows a null pointer. Such a shadow
starts as a mirror of the initializer: floats zero, each address of a writable global the
address of that global's shadow at the same offset, integers, addresses of constants and of
functions as they are. The globals pointed at get shadows too (by the caller, with
`shadow_initializer` again: the mirror is transitive).

Resetting a shadow that holds pointers (after a top-level call, or `__enzyme_zero_shadows`)
zeroes its floats and keeps its pointers, which point at other shadows (the mirror, or a
buffer the user gave a context's shadow).
"""
from __future__ import annotations

import re
from typing import Callable

from ..ir.model import make_name, split_top, strip_name, take_type

_GLOBAL_LINE = re.compile(r'^@(?:"[^"]*"|\S+)\s*=\s*(.*?)\bglobal\s+(.*)$')
# a constant's definition: a constant table of pointers into shadowed globals has a mirrored
# shadow too (analysis/activity.py: _pointer_tables_into)
_CONSTANT_LINE = re.compile(r'^@(?:"[^"]*"|\S+)\s*=\s*(.*?)\bconstant\s+(.*)$')
_FLOAT_ZERO = {"half": "0.0", "bfloat": "0xR0000", "float": "0.0", "double": "0.0",
               "x86_fp80": "0xK00000000000000000000", "fp128": "0xL00000000000000000000000000000000",
               "ppc_fp128": "0xM00000000000000000000000000000000"}
# one pass over an initializer: a string constant (left alone), a float constant, or a global
_TOKENS = re.compile(r'(?P<str>c"[^"]*")'
                     r'|\b(?P<fty>half|bfloat|float|double|x86_fp80|fp128|ppc_fp128)\s+'
                     r'(?P<fval>[-+]?(?:0x[KLMHR]?[0-9A-Fa-f]+|[0-9][0-9.]*(?:e[-+]?[0-9]+)?|inf|nan))'
                     r'|@(?P<name>"[^"]*"|[-a-zA-Z$._0-9]+)')


def initializer(module, g: str, constants: bool = False) -> str | None:
    """The initializer of global g (name without '@'), None if it has none (external), or,
    unless `constants`, if g is a constant."""
    line = module.globals.get(g, "")
    m = _GLOBAL_LINE.match(line) or (_CONSTANT_LINE.match(line) if constants else None)
    if m is None or re.search(r'\bexternal\b|\bextern_weak\b', m.group(1)):
        return None
    _, rest = take_type(m.group(2))
    parts = split_top(rest)
    return parts[0] if parts else None


def _writable(module, g: str) -> bool:
    """A global defined here that the program may write (so it may get a shadow)."""
    return initializer(module, g) is not None


def shadow_initializer(module, g: str, shadow_of: Callable[[str], str]) -> tuple[str, list[str]]:
    """(initializer of g's shadow, names of the writable globals it points at), for g named
    without '@'; `shadow_of(name)` is the '@'-name of the pointed-at global's shadow. A
    global pointing at no writable global has `zeroinitializer` (and no list)."""
    init = initializer(module, strip_name(g) if g.startswith("@") else g, constants=True)
    if init is None or "@" not in init:
        return "zeroinitializer", []
    referenced: list[str] = []

    def mirror(m: re.Match) -> str:
        if m.group("str"):
            return m.group("str")
        if m.group("fty"):
            return f"{m.group('fty')} {_FLOAT_ZERO[m.group('fty')]}"
        name = strip_name("@" + m.group("name"))
        if name in module.globals and _writable(module, name):
            if name not in referenced:
                referenced.append(name)
            return shadow_of(name)
        return m.group(0)

    text = _TOKENS.sub(mirror, init)
    return (text, referenced) if referenced else ("zeroinitializer", [])


def init_constant_name(shadow: str) -> str:
    """'@g$sh' -> '@g$sh$init', the private constant a mirrored shadow is reset from."""
    return make_name("@", shadow, "init")


def shadow_definitions(module, g: str, shadow: str, ty: str, linkage: str,
                       shadow_of: Callable[[str], str]) -> tuple[list[str], list[str]]:
    """(definition lines of `shadow`, the shadow of global g of value type ty, plus its reset
    constant when mirrored; the writable globals whose shadows it points at)."""
    init, referenced = shadow_initializer(module, g, shadow_of)
    lines = [f"{shadow} = {linkage} global {ty} {init}, align 16"]
    if referenced:
        lines.append(f"{init_constant_name(shadow)} = private unnamed_addr constant {ty} {init}, align 16")
    return lines, referenced


_ZEROED_LEAVES = 64   # a shadow with more float leaves among its pointers is reset as a whole


def reset_lines(module, g: str, shadow: str, ty: str, shadow_of: Callable[[str], str],
                size: str) -> list[str] | None:
    """The lines resetting a shadow that holds pointers: its floats zeroed, its pointers kept
    (they point at other shadows: the mirror, or buffers the user gave); beyond
    `_ZEROED_LEAVES` float leaves, a copy of the mirror (`size` bytes) from its reset constant.
    None for a shadow without pointers (the caller zeroes it whole)."""
    from ..ir.model import float_leaves, pointer_leaves
    if next(iter(pointer_leaves(module, ty)), None) is None:
        return None
    leaves = []
    for leaf in float_leaves(module, ty):
        leaves.append(leaf)
        if len(leaves) > _ZEROED_LEAVES:
            break
    if len(leaves) > _ZEROED_LEAVES:
        if not shadow_initializer(module, g, shadow_of)[1]:
            return None
        return [f"  call void @llvm.memcpy.p0.p0.i64(ptr {shadow}, ptr {init_constant_name(shadow)}, "
                f"i64 {size}, i1 false)"]
    out = []
    for path, fty, count in leaves:
        at = f"getelementptr inbounds ({ty}, ptr {shadow}, i64 0{''.join(f', i32 {i}' for i in path)})" \
            if path else shadow
        if count == 1:
            out.append(f"  store {fty} {_FLOAT_ZERO[fty]}, ptr {at}, align 1")
        else:
            out.append(f"  call void @llvm.memset.p0.i64(ptr {at}, i8 0, i64 ptrtoint (ptr getelementptr "
                       f"({fty}, ptr null, i64 {count}) to i64), i1 false)")
    return out


def value_type(module, g: str) -> str | None:
    """The value type of global g (name without '@')."""
    m = _GLOBAL_LINE.match(module.globals.get(g, ""))
    return take_type(m.group(2))[0] if m else None


def mirrored_closure(module, g: str, ty: str, shadow_of: Callable[[str], str]) -> list[tuple[str, str, str]]:
    """(global, its shadow, value type) for g (without '@') and, transitively, every
    writable global its shadow's initializer points at: the shadows that are defined, and
    reset, together."""
    out, seen, todo = [], set(), [(g, ty)]
    while todo:
        name, t = todo.pop(0)
        if name in seen or t is None:
            continue
        seen.add(name)
        out.append((name, shadow_of(name), t))
        for y in shadow_initializer(module, name, shadow_of)[1]:
            todo.append((y, value_type(module, y)))
    return out
