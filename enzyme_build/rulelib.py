"""Rule libraries (`blas/`, `complex/`): C generated from a table, compiled to bitcode once
and cached, then linked into the program when it uses those functions.

`compiled_library` is the one place that compiles such a source: from the caller's
in-process memo, else the private cache directory `$XDG_CACHE_HOME/enzyme-build/<name>`
(keyed by the hash of the source, the compiler and the flags; created 0700 and ignored
when anyone else can write it, since a planted bitcode file would be linked into programs),
else clang. A cache entry LLVM cannot read is rebuilt; entries are written atomically.
"""
from __future__ import annotations

import hashlib
import os
import subprocess


def private_cache_dir(name: str) -> str | None:
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = os.path.join(root, "enzyme-build", name)
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        info = os.stat(path)
    except OSError:
        return None
    if info.st_uid != os.getuid() or info.st_mode & 0o022:
        return None
    return path


def compiled_library(source: str, *, name: str, what: str, flags: tuple[str, ...],
                     memo: dict[str, bytes], triple: str | None = None):
    """The parsed module of C `source` compiled with clang `flags` (for `triple` when given).
    `name` names the cache directory, `what` the library in messages."""
    from . import llvm
    from .errors import EnzymeBuildError
    from .files import replace_atomically
    from .toolchain import clang_command
    clang = clang_command() + ([f"--target={triple}"] if triple else [])
    key = hashlib.sha256((source + "\0" + " ".join(clang + list(flags))).encode()).hexdigest()[:24]
    label = f"enzyme-build {what}"
    if key in memo:
        return llvm.parse_bitcode(memo[key], label)
    directory = private_cache_dir(name)
    path = os.path.join(directory, key + ".bc") if directory else None
    if path and os.path.isfile(path):
        try:
            with open(path, "rb") as fh:
                data = fh.read()
            module = llvm.parse_bitcode(data, label)
            memo[key] = data
            return module
        except (OSError, EnzymeBuildError):
            pass   # unreadable or damaged: compile again and replace it
    proc = subprocess.run([*clang, *flags, "-", "-o", "-"], input=source.encode(), capture_output=True)
    if proc.returncode != 0 or proc.stdout[:2] != b"BC":
        raise EnzymeBuildError(f"cannot compile the {what}: "
                               + proc.stderr.decode(errors="replace").strip()[-2000:],
                               hint="check that clang works: enzyme-build doctor")
    data = proc.stdout
    memo[key] = data
    if path:
        try:   # readers see no file or the whole file
            replace_atomically(path, data, mode=0o600)
        except OSError:
            pass
    return llvm.parse_bitcode(data, label)
