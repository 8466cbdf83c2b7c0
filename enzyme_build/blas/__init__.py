"""BLAS derivatives as a library of custom rules (see docs/blas.md).

`attach_blas_rules(text)` is the one hook the AD stage calls on the whole-program module
before it collects registrations: when the program calls BLAS routines the table covers
(`cblas_dgemm`, `dgemm_`, ...), the calls are renamed to the library's entry points and
the rule library (C generated from `table.py`, compiled once by clang and cached by the
hash of its source) is linked in with its registration globals. Programs that call no
BLAS routine are returned unchanged.
"""
from __future__ import annotations

import hashlib
import os
import re
import subprocess

from .generate import entry_name, library_source
from .table import INACTIVE, known_names

_NAME_CHARS = r"[-a-zA-Z$._0-9]"
_DECLARE_RE = re.compile(r"^declare [^\n@]*@([a-z0-9_]+)\(", re.MULTILINE)
_DEFINE_RE = re.compile(r"^define [^\n@]*@([a-z0-9_]+)\(", re.MULTILINE)
_WIDTH_CALL_RE = re.compile(r"@__enzyme_fwddiff[^\n]*ptr @(?:enzyme_width|enzyme_vector)\b")
# families whose forward rule may run once per lane: no side effect but writing the same
# values again (the engine calls a custom forward rule once per lane in vector mode)
LANE_SAFE = frozenset({"dot", "nrm2", "asum", "copy"})
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
    _refuse_vector_mode(text, routines)
    from .. import llvm
    bitcode = rules_bitcode(sorted({(f, p) for f, p, _ in routines.values()}), inactive)
    module = llvm.parse_assembly(rename_calls(text, routines), "program")
    rules = llvm.parse_bitcode(bitcode, "enzyme-build BLAS rules")
    return llvm.link_modules([module, rules]).text()


def _refuse_vector_mode(text: str, routines) -> None:
    """Vector forward mode runs a custom forward rule once per lane; a BLAS routine that
    updates memory in place (axpy, gemm with beta != 0, trsm, ...) would run N times."""
    unsafe = sorted(s for s, (family, _, _) in routines.items() if family not in LANE_SAFE)
    if unsafe and _WIDTH_CALL_RE.search(text):
        from ..errors import EnzymeBuildError
        raise EnzymeBuildError(
            f"vector forward mode (enzyme_width) through BLAS routines is not supported yet: "
            f"this program calls {', '.join(unsafe)}, whose derivative rule updates memory in place "
            f"and would run once per lane",
            hint="differentiate one direction at a time (__enzyme_fwddiff without enzyme_width), "
                 "or use reverse mode")


def _cache_dir() -> str:
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(root, "enzyme-build", "blas")


def rules_bitcode(selected: list[tuple[str, str]], inactive: list[str] = ()) -> bytes:
    """The compiled rule library for these (family, precision) pairs: from this process's
    memo, else the cache directory (keyed by the hash of source and compiler), else clang."""
    from ..errors import EnzymeBuildError
    from ..toolchain import clang_command
    source = library_source(selected, inactive)
    clang = clang_command()
    key = hashlib.sha256((source + "\0" + " ".join(clang)).encode()).hexdigest()[:24]
    if key in _memo:
        return _memo[key]
    path = os.path.join(_cache_dir(), key + ".bc")
    try:
        with open(path, "rb") as fh:
            data = fh.read()
        if data[:2] == b"BC":
            _memo[key] = data
            return data
    except OSError:
        pass
    proc = subprocess.run([*clang, "-x", "c", "-std=gnu11", "-O2", "-fPIC", "-fvisibility=hidden", "-w", "-c", "-emit-llvm",
                           "-", "-o", "-"], input=source.encode(), capture_output=True)
    if proc.returncode != 0:
        raise EnzymeBuildError("cannot compile the BLAS derivative rules: "
                               + proc.stderr.decode(errors="replace").strip()[-2000:],
                               hint="check that clang works: enzyme-build doctor")
    data = proc.stdout
    _memo[key] = data
    try:   # one atomic writer: a concurrent build reads either nothing or the whole file
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except OSError:
        pass
    return data
