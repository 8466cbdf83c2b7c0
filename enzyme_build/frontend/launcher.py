"""ENZYME_BUILD_LAUNCHER: per-file compiles through ccache, sccache, distcc or icecream.

enzyme-build stays in front: it decides the fat-object flags and then runs
`<launcher…> clang-22 <args> <fat flags>`, so a cache keys on the real compiler and on every
flag that shapes the object (bitcode embedding included), and a distributed compiler ships
the very command we would run. What else changes an object is added to the key: for
ccache, a small key file (enzyme-build's version, a digest of the code that post-processes
objects, the settings that change them) named in CCACHE_EXTRAFILES; other caches see the
settings through the command line, which differs whenever they matter.

The link (whole-program AD) is never sent anywhere: it is the one serial step, run here.
"""
from __future__ import annotations

import os
import shlex

LAUNCHER_VAR = "ENZYME_BUILD_LAUNCHER"
# Settings that change what a compile produces (besides the command line itself).
KEYED_SETTINGS = ("ENZYME_BUILD_CONFIGURE_ONLY", "ENZYME_BUILD_CLANG", "ENZYME_BUILD_LLVM_BIN")
# Modules whose code decides an object's contents after clang (section rename, link guard,
# custom-derivative attribute rewriting).
KEYED_MODULES = ("driver.py", "attributes.py", "../cmdline.py", "../link/objfile.py")


def launcher_words() -> list[str]:
    """The launcher command as words (`ccache`, `distcc`, `ccache distcc`), or []."""
    value = os.environ.get(LAUNCHER_VAR, "").strip()
    return shlex.split(value) if value else []


def key_text(version: str) -> str:
    """What, beyond clang's own command line, decides a fat object."""
    import hashlib
    here = os.path.dirname(os.path.abspath(__file__))
    digest = hashlib.sha256()
    for name in KEYED_MODULES:
        try:
            with open(os.path.normpath(os.path.join(here, name)), "rb") as handle:
                digest.update(handle.read())
        except OSError:
            digest.update(name.encode())
    settings = "".join(f"{name}={os.environ.get(name, '')}\n" for name in KEYED_SETTINGS)
    return f"enzyme-build {version}\ncode {digest.hexdigest()}\n{settings}"


def key_file(version: str) -> str | None:
    """A file holding key_text, named by its digest (written once, shared by all compiles)."""
    import hashlib
    text = key_text(version)
    name = hashlib.sha256(text.encode()).hexdigest()[:24]
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = os.path.join(root, "enzyme-build", "cache-keys", name)
    if os.path.isfile(path):
        return path
    try:
        from ..files import replace_atomically
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        replace_atomically(path, text, mode=0o644)
    except OSError:
        return None
    return path


def launch(command: list[str], env: dict[str, str] | None = None) -> tuple[list[str], dict | None]:
    """The compile command with the launcher in front, and the environment it needs."""
    words = launcher_words()
    if not words:
        return command, env
    env = dict(os.environ if env is None else env)
    if any(os.path.basename(word) == "ccache" for word in words):
        from .. import __version__
        path = key_file(__version__)
        if path:
            extra = env.get("CCACHE_EXTRAFILES")
            env["CCACHE_EXTRAFILES"] = f"{extra}{os.pathsep}{path}" if extra else path
    return words + command, env
