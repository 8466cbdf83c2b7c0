"""`enzyme_build.load`: build a package once, keyed by a content hash, and import it.

The key covers the contents of the sources, of the headers they include (clang -MM) and of
declared dependencies, the exports, the flags,
the package name, enzyme-build's own code and version, the clang it uses, jaxlib's version
and Python's. Builds of one key are serialized by an exclusive lock on a file next to the
cache entry, and a package appears in the cache only by an atomic rename, so concurrent
processes either build it or wait and reuse it.
"""
from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import os
import re
import sys
from importlib import metadata

from .. import __version__, toolchain
from ..errors import EnzymeBuildError
from .builder import HEADER_SUFFIXES, MARKER, PackageRequest, build_package, split_arguments
from .tools import run_tool

CACHE_VARIABLE = "ENZYME_BUILD_CACHE"
_code_digest: str | None = None


class LoadError(EnzymeBuildError):
    """A failed `load`: its text is the whole message with the fix, as the command prints it."""

    def __str__(self) -> str:
        return self.render()


def cache_root() -> str:
    explicit = os.environ.get(CACHE_VARIABLE)
    if explicit:
        return os.path.abspath(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "enzyme-build", "packages")


def _enzyme_build_code() -> str:
    """A digest of enzyme-build's own sources: a changed engine makes new derivatives."""
    global _code_digest
    if _code_digest is None:
        digest = hashlib.sha256()
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        for directory, subdirectories, files in os.walk(root):
            subdirectories[:] = sorted(d for d in subdirectories if d != "__pycache__")
            for filename in sorted(files):
                if filename.endswith((".py", ".h")):
                    path = os.path.join(directory, filename)
                    digest.update(os.path.relpath(path, root).encode())
                    with open(path, "rb") as handle:
                        digest.update(handle.read())
        _code_digest = digest.hexdigest()
    return _code_digest


def _version_of(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "absent"


def included_files(sources: list[str], flags: list[str]) -> list[str]:
    """The non-system headers the sources include (clang -MM), so that editing one rebuilds."""
    try:
        inputs = split_arguments((*sources, *flags))
    except EnzymeBuildError:
        return []  # the build reports it
    found: list[str] = []
    for source in inputs.sources:
        if source.endswith(HEADER_SUFFIXES):
            continue
        proc = run_tool(toolchain.clang_command(cxx=not source.endswith(".c")) + [
            "-MM", "-Qunused-arguments", *inputs.syntax_flags, source])
        if proc.returncode != 0:
            continue  # a compile error: the build itself reports it
        words = proc.stdout.replace("\\\n", " ").split()[1:]  # after "target.o:"
        found += [os.path.abspath(w) for w in words if w != "\\" and os.path.abspath(w) != source]
    return sorted(set(found))


def cache_key(name: str, sources: list[str], depends: list[str], exports: list[str],
              flags: list[str]) -> str:
    digest = hashlib.sha256()

    def add(label: str, value: str | bytes) -> None:
        data = value if isinstance(value, bytes) else value.encode()
        digest.update(f"{label}:{len(data)}:".encode())
        digest.update(data)

    add("version", __version__)
    add("code", _enzyme_build_code())
    add("clang", toolchain.find("clang").version)
    add("python", sys.version)
    add("jaxlib", _version_of("jaxlib"))
    add("name", name)
    for export in exports:
        add("export", export)
    for flag in flags:
        add("flag", flag)
    for path in sources + depends + included_files(sources, flags):
        try:
            with open(path, "rb") as handle:
                add("file", os.path.basename(path))
                add("content", handle.read())
        except OSError as err:
            raise LoadError(f"cannot read {path}: {err.strerror}", hint="check the path") from None
    return digest.hexdigest()[:20]


def _default_name(source: str) -> str:
    stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(source))[0]) or "package"
    return stem if not stem[0].isdigit() else f"_{stem}"


def _import(name: str, directory: str):
    module_name = name
    existing = sys.modules.get(name)
    package_dir = os.path.join(directory, name)
    if existing is not None:
        if os.path.dirname(getattr(existing, "__file__", "") or "") == package_dir:
            return existing
        module_name = f"{name}_{os.path.basename(directory).rsplit('-', 1)[-1][:8]}"
        if module_name in sys.modules:
            return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(
        module_name, os.path.join(package_dir, "__init__.py"), submodule_search_locations=[package_dir])
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    return module


def load(sources, exports, name: str | None = None, extra_cflags=(), extra_ldflags=(),
         depends=(), build_directory: str | None = None, verbose: bool = False):
    """Build (once) and import the package of `sources` with `exports`, like
    `enzyme-build package SOURCES EXTRA_CFLAGS EXTRA_LDFLAGS --name NAME --export …`.

    The result is cached under ENZYME_BUILD_CACHE (default ~/.cache/enzyme-build/packages) by a
    hash of everything that affects it; `depends` lists headers and other files whose changes
    must trigger a rebuild. Safe when several processes load the same package at once.
    """
    sources = [sources] if isinstance(sources, (str, os.PathLike)) else list(sources)
    if not sources:
        raise LoadError("load() needs at least one source file", hint="load('energy.c', exports=[…])")
    sources = [os.path.abspath(os.fspath(s)) for s in sources]
    exports = [exports] if isinstance(exports, str) else list(exports)
    name = name or _default_name(sources[0])
    flags = [*map(str, extra_cflags), *map(str, extra_ldflags)]
    depends = [os.path.abspath(os.fspath(d)) for d in depends]
    try:
        key = cache_key(name, sources, depends, exports, flags)
        root = os.path.abspath(build_directory) if build_directory else cache_root()
        os.makedirs(root, exist_ok=True)
        directory = os.path.join(root, f"{name}-{key}")
        if not os.path.exists(os.path.join(directory, MARKER)):
            with open(f"{directory}.lock", "a") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
                if not os.path.exists(os.path.join(directory, MARKER)):
                    if verbose:
                        print(f"enzyme-build: building {name} into {directory}", file=sys.stderr)
                    build_package(PackageRequest((*sources, *flags), name, directory, tuple(exports)))
    except LoadError:
        raise
    except EnzymeBuildError as err:
        raise LoadError(err.message, location=err.location, hint=err.hint) from None
    return _import(name, directory)
