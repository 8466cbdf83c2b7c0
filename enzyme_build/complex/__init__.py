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

import hashlib
import os
import re
import subprocess

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


def _private_cache_dir() -> str | None:
    """$XDG_CACHE_HOME/enzyme-build/complex, created 0700; None when others can write it."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = os.path.join(root, "enzyme-build", "complex")
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        info = os.stat(path)
    except OSError:
        return None
    if info.st_uid != os.getuid() or info.st_mode & 0o022:
        return None
    return path


def _compile(source: str, clang: list[str]) -> bytes:
    from ..errors import EnzymeBuildError
    proc = subprocess.run([*clang, *_FLAGS, "-", "-o", "-"], input=source.encode(), capture_output=True)
    if proc.returncode != 0 or proc.stdout[:2] != b"BC":
        raise EnzymeBuildError("cannot compile the complex arithmetic library: "
                               + proc.stderr.decode(errors="replace").strip()[-2000:],
                               hint="check that clang works: enzyme-build doctor")
    return proc.stdout


def library_module(selected, triple: str | None = None):
    """The compiled library for these (symbol, entry, precision) triples, parsed: from
    this process's memo, else the cache directory (keyed by the hash of source and
    compiler), else clang."""
    from .. import llvm
    from ..errors import EnzymeBuildError
    from ..files import KEEP_VAR, keep_directory, replace_atomically
    from ..toolchain import clang_command
    source = library_source(selected)
    keep = keep_directory(os.environ.get(KEEP_VAR))
    if keep:
        replace_atomically(os.path.join(keep, "complex-library.c"), source)
    clang = clang_command() + ([f"--target={triple}"] if triple else [])
    key = hashlib.sha256((source + "\0" + " ".join(clang + list(_FLAGS))).encode()).hexdigest()[:24]
    name = "enzyme-build complex library"
    if key in _memo:
        return llvm.parse_bitcode(_memo[key], name)
    directory = _private_cache_dir()
    path = os.path.join(directory, key + ".bc") if directory else None
    if path and os.path.isfile(path):
        try:
            with open(path, "rb") as fh:
                data = fh.read()
            module = llvm.parse_bitcode(data, name)
            _memo[key] = data
            return module
        except (OSError, EnzymeBuildError):
            pass   # unreadable or damaged: compile again and replace it
    data = _compile(source, clang)
    _memo[key] = data
    if path:
        try:
            replace_atomically(path, data, mode=0o600)
        except OSError:
            pass
    return llvm.parse_bitcode(data, name)
