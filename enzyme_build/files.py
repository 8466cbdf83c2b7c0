"""Creating files safely: unpredictable temporary names, atomic replacement, checked KEEP dirs.

Every file enzyme-build writes next to the user's files (outputs, dependency files, caches)
is first created under a fresh `mkstemp` name (O_EXCL: a planted symlink is never
followed) and then renamed over the final name, which replaces a link there instead of
writing through it. Imported by compiles: standard library only, imports kept lazy.
"""
from __future__ import annotations

import os

from .errors import EnzymeBuildError


def temporary_beside(path: str) -> str:
    """A new empty file of our own next to `path` (same directory, so a rename is atomic)."""
    import tempfile
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    os.close(fd)
    return tmp


def replace_atomically(path: str, data: bytes | str, *, mode: int | None = None) -> None:
    """Write `data` to `path`: readers see the old file or the whole new one, never a part."""
    tmp = temporary_beside(path)
    try:
        with open(tmp, "wb") as handle:
            handle.write(data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        unlink_quietly(tmp)
        raise


def unlink_quietly(path: str) -> None:
    """Remove `path` if it is there; a missing file or a failure to remove it is no error."""
    try:
        os.unlink(path)
    except OSError:
        pass


KEEP_VAR = "ENZYME_BUILD_KEEP"


def keep_directory(path: str | None) -> str | None:
    """The ENZYME_BUILD_KEEP directory, created (mode 0700) if missing, checked if not.

    Intermediate IR is written there under fixed, per-output names, so the directory must
    be the user's own and closed to others: otherwise another user could plant a symlink
    where a file is about to be written, or read the program's IR.
    """
    if not path:
        return None
    fix = f"point {KEEP_VAR} at a directory of your own (it is created if missing)"
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        info = os.stat(path)
    except FileExistsError:
        raise EnzymeBuildError(f"{KEEP_VAR}={path} exists and is not a directory", hint=fix)
    except NotADirectoryError:
        raise EnzymeBuildError(f"{KEEP_VAR}={path} lies under a file, not a directory", hint=fix)
    except OSError as err:
        raise EnzymeBuildError(f"{KEEP_VAR}={path} cannot be created: {err.strerror or err}",
                               hint=fix)
    import stat
    if not stat.S_ISDIR(info.st_mode):
        raise EnzymeBuildError(f"{KEEP_VAR}={path} is not a directory", hint=fix)
    if info.st_uid != os.geteuid():
        raise EnzymeBuildError(f"{KEEP_VAR}={path} belongs to another user", hint=fix)
    if info.st_mode & 0o022:
        raise EnzymeBuildError(f"{KEEP_VAR}={path} is writable by other users",
                               hint=f"chmod go-w {path}, or {fix}")
    return path
