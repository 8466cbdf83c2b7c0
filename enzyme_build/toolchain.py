"""Discovery of the LLVM tools enzyme-build drives (clang, llvm-link, llvm-ar, ld.lld, …).

Every tool must be of LLVM major ``LLVM_MAJOR`` (the one llvmlite embeds). This module
must stay cheap to import: the compile path imports it, so no llvmlite, click or rich.
"""
from __future__ import annotations

import os
import re
import subprocess
from collections import namedtuple as _namedtuple

from . import LLVM_MAJOR
from .errors import EnzymeBuildError

INSTALL_HINT = f"apt-get install -y clang-{LLVM_MAJOR} llvm-{LLVM_MAJOR} lld-{LLVM_MAJOR}"

# tool key -> (base name used in $ENZYME_BUILD_LLVM_BIN and /usr/lib/llvm-N/bin, required?)
TOOLS: dict[str, tuple[str, bool]] = {
    "clang": ("clang", True),
    "llvm-link": ("llvm-link", True),
    "llvm-ar": ("llvm-ar", True),
    "llvm-objcopy": ("llvm-objcopy", True),
    "ld.lld": ("ld.lld", False),  # for users' -fuse-ld=lld; our own links use clang's default
    "llvm-nm": ("llvm-nm", False),
    "opt": ("opt", False),          # the AD stage's scalarizer (vector float code)
    "llc": ("llc", False),          # code generation out of process (llvm/backend.py)
    "llvm-split": ("llvm-split", False),
}

_VERSION_RE = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")
_memo: dict[str, "Tool"] = {}


# namedtuples, not dataclasses: importing dataclasses costs a compile several ms
class Tool(_namedtuple("_Tool", "key path version")):
    """One discovered tool: its absolute path and the version it reported."""

    __slots__ = ()

    @property
    def major(self) -> int:
        return int(self.version.split(".")[0])


class Attempt(_namedtuple("_Attempt", "candidate outcome")):
    """One candidate we looked at, and what happened (for error messages and doctor)."""

    __slots__ = ()


def candidates(key: str, env: dict[str, str] | None = None) -> list[str]:
    """Candidate names/paths for a tool, in discovery order (ARCHITECTURE §2)."""
    env = os.environ if env is None else env
    base = TOOLS[key][0]
    # An explicit setting is authoritative: silently falling back to another clang would
    # hide a typo in the variable.
    if key == "clang" and env.get("ENZYME_BUILD_CLANG"):
        return [env["ENZYME_BUILD_CLANG"]]
    bindir = env.get("ENZYME_BUILD_LLVM_BIN")
    if bindir:
        return [os.path.join(bindir, f"{base}-{LLVM_MAJOR}"), os.path.join(bindir, base)]
    out: list[str] = []
    out.append(f"{base}-{LLVM_MAJOR}")
    out.append(os.path.join(f"/usr/lib/llvm-{LLVM_MAJOR}/bin", base))
    return out


def parse_version(text: str) -> str | None:
    """The first dotted version in a tool's --version output ("22.1.8")."""
    for line in text.splitlines():
        if "version" in line.lower() or "LLD" in line:
            match = _VERSION_RE.search(line)
            if match:
                return ".".join(g for g in match.groups() if g is not None)
    return None


def _resolve(candidate: str) -> str | None:
    found = _which(candidate)
    return found[0] if found else None


def _which(candidate: str) -> tuple[str, bool] | None:
    """(path, trusted) of a candidate: trusted unless found through a PATH entry that is
    relative (`.`, or the empty entry of `PATH=:/usr/bin`) and so names whatever directory
    the command happens to run in."""
    if os.sep in candidate:
        ok = os.path.isfile(candidate) and os.access(candidate, os.X_OK)
        return (candidate, os.path.isabs(candidate)) if ok else None
    for entry in os.environ.get("PATH", os.defpath).split(os.pathsep):
        path = os.path.join(entry or ".", candidate)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path, os.path.isabs(entry)
    return None


def probe(key: str, candidate: str) -> tuple[Tool | None, Attempt]:
    """Run ``candidate --version`` and judge it."""
    path = _resolve(candidate)
    if path is None:
        return None, Attempt(candidate, "not found")
    return _judge(key, candidate, path)


def _judge(key: str, candidate: str, path: str) -> tuple[Tool | None, Attempt]:
    try:
        proc = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as err:
        return None, Attempt(candidate, f"cannot run: {err}")
    printed = (proc.stdout + proc.stderr).strip()
    version = parse_version(printed)
    first_line = printed.splitlines()[0] if printed else "(no output)"
    if version is None:
        return None, Attempt(candidate, f"no version in output: {first_line!r}")
    if int(version.split(".")[0]) != LLVM_MAJOR:
        return None, Attempt(candidate, f"LLVM {version}, need {LLVM_MAJOR}: {first_line!r}")
    return Tool(key, os.path.abspath(path), version), Attempt(candidate, f"ok: {first_line}")


def search(key: str, env: dict[str, str] | None = None) -> tuple[Tool | None, list[Attempt]]:
    """Try every candidate for a tool; the first good one wins."""
    tool, attempts, _trusted = _search(key, env)
    return tool, attempts


def _search(key: str, env: dict[str, str] | None = None):
    """(tool, attempts, trusted): trusted is False for a tool found through a relative PATH
    entry, which must not be remembered: from another directory it is another file."""
    attempts = []
    for candidate in candidates(key, env):
        found = _which(candidate)
        if found is None:
            attempts.append(Attempt(candidate, "not found"))
            continue
        tool, attempt = _judge(key, candidate, found[0])
        attempts.append(attempt)
        if tool is not None:
            return tool, attempts, found[1]
    return None, attempts, False


# --- a small on-disk cache, so a compile does not re-probe clang every time -----------

def _cache_path() -> str:
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(root, "enzyme-build", "toolchain.json")


def _cache_key(key: str) -> str:
    env = os.environ
    parts = [key, env.get("ENZYME_BUILD_CLANG", ""), env.get("ENZYME_BUILD_LLVM_BIN", ""),
             env.get("PATH", ""), str(LLVM_MAJOR)]
    return "|".join(parts)


def _stamp(path: str) -> list[float] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_mtime, st.st_size]


def _load_cache() -> dict:
    try:
        with open(_cache_path()) as fh:
            import json  # lazily: only when the cache exists
            data = json.load(fh)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _store_cache(entry_key: str, tool: Tool) -> None:
    path = _cache_path()
    data = _load_cache()
    data[entry_key] = {"path": tool.path, "version": tool.version, "stamp": _stamp(tool.path)}
    try:
        import json

        from .files import replace_atomically
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        replace_atomically(path, json.dumps(data))
    except OSError:
        pass  # a read-only home only costs a re-probe next time


def _cached(key: str) -> Tool | None:
    entry = _load_cache().get(_cache_key(key))
    if not isinstance(entry, dict):
        return None
    path = entry.get("path")
    if not isinstance(path, str) or _stamp(path) != entry.get("stamp"):
        return None
    return Tool(key, path, str(entry.get("version")))


def find(key: str) -> Tool:
    """The tool for ``key`` or an EnzymeBuildError naming every candidate tried."""
    tool, attempts = _find(key)
    if tool is None:
        tried = "\n".join(f"    {a.candidate}: {a.outcome}" for a in attempts)
        raise EnzymeBuildError(
            f"no usable {TOOLS[key][0]} of LLVM {LLVM_MAJOR}; tried:\n{tried}",
            hint=f"{INSTALL_HINT} (or point ENZYME_BUILD_LLVM_BIN / ENZYME_BUILD_CLANG "
                 f"at LLVM {LLVM_MAJOR} tools)")
    return tool


def find_optional(key: str) -> Tool | None:
    """The tool for ``key``, or None when no candidate is usable (optional tools: opt and
    llc out of process, llvm-split). Remembered on disk like clang, so that a compile does
    not run ``--version`` of each again."""
    return _find(key)[0]


def _find(key: str) -> tuple[Tool | None, list[Attempt]]:
    if key in _memo:
        return _memo[key], []
    tool, attempts = _cached(key), []
    if tool is None:
        tool, attempts, trusted = _search(key)
        if tool is None:
            return None, attempts    # a missing tool is looked for again next time
        if trusted:
            _store_cache(_cache_key(key), tool)
    _memo[key] = tool
    return tool, attempts


def clang_command(cxx: bool = False) -> list[str]:
    """argv prefix that runs clang as the C (or C++) driver."""
    path = find("clang").path
    return [path, "--driver-mode=g++"] if cxx else [path]
