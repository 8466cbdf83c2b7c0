"""The project's error classes: user errors (exit 1) and internal bugs (exit 2)."""
from __future__ import annotations

import os
import sys


class EnzymeBuildError(Exception):
    """A problem with the user's input, tools or environment, with a location and a fix.

    ``location`` is a source location ("file.c:12") when debug info gives one, or the IR
    function/instruction the problem was found in. ``hint`` says how to fix it.
    """

    exit_code = 1

    def __init__(self, message: str, *, location: str | None = None, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.location = location
        self.hint = hint

    def render(self) -> str:
        head = f"{self.location}: " if self.location else ""
        text = f"enzyme-build: error: {head}{self.message}"
        if self.hint:
            text += f"\n  fix: {self.hint}"
        return text


class InternalError(EnzymeBuildError):
    """A bug in enzyme-build itself, not in the user's program."""

    exit_code = 2

    def render(self) -> str:
        return (f"enzyme-build: internal error: {self.message}\n"
                "  this is a bug in enzyme-build; please report it with ENZYME_BUILD_DEBUG=1 output")


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised like Ctrl-C so that every `finally` removes what it made
    and subprocess.run stops the child it waits for."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _raise_terminated(signum, _frame):
    raise Terminated(signum)


def handle_termination() -> None:
    """SIGTERM and SIGHUP end enzyme-build the way SIGINT does: children stopped, temporary
    files removed, no partial output, exit status 128 + the signal."""
    import signal
    for signum in (signal.SIGTERM, signal.SIGHUP):
        try:
            if signal.getsignal(signum) is signal.SIG_DFL:
                signal.signal(signum, _raise_terminated)
        except (ValueError, OSError):  # not the main thread, or not allowed
            pass


# errno values that are the machine's state, not a bug: said as such, with the file
_ENVIRONMENT_ERRNOS = {
    28: "no space left on the device",        # ENOSPC
    122: "disk quota exceeded",               # EDQUOT
    30: "the file system is read-only",       # EROFS
    13: "permission denied",                  # EACCES
    1: "operation not permitted",             # EPERM
    24: "too many open files",                # EMFILE
    12: "out of memory",                      # ENOMEM
    36: "file name too long",                 # ENAMETOOLONG
}


def environment_error(err: OSError) -> EnzymeBuildError | None:
    """An OSError caused by the machine (a full disk, a read-only or forbidden path), as a
    user error naming the file; None for anything else (a bug)."""
    what = _ENVIRONMENT_ERRNOS.get(err.errno or 0)
    if what is None:
        return None
    where = f" writing {err.filename}" if err.filename else ""
    hint = {28: "free some space, or point TMPDIR (and the output) at a larger file system",
            122: "free some space, or point TMPDIR (and the output) elsewhere"}.get(
        err.errno, "check the permissions and space of the directories involved (TMPDIR, the output's)")
    return EnzymeBuildError(f"{what}{where}", hint=hint)


def run_guarded(fn, *args, **kwargs) -> int:
    """Call fn, turning our errors (and unexpected exceptions) into one message and an exit code.

    ENZYME_BUILD_DEBUG=1 re-raises so the traceback is visible.
    """
    handle_termination()
    try:
        result = fn(*args, **kwargs)
        return int(result or 0)
    except EnzymeBuildError as err:
        if os.environ.get("ENZYME_BUILD_DEBUG"):
            raise
        print(err.render(), file=sys.stderr)
        return err.exit_code
    except Terminated as stop:
        import signal
        _quiet_finalizers()
        print(f"enzyme-build: stopped by {signal.Signals(stop.signum).name}", file=sys.stderr)
        return 128 + stop.signum
    except KeyboardInterrupt:
        _quiet_finalizers()
        print("enzyme-build: interrupted", file=sys.stderr)
        return 130
    except OSError as err:
        known = environment_error(err)
        if known is None or os.environ.get("ENZYME_BUILD_DEBUG"):
            return _internal(err)
        print(known.render(), file=sys.stderr)
        return known.exit_code
    except Exception as err:  # a bug: say so, without a traceback unless asked
        return _internal(err)


def _quiet_finalizers() -> None:
    """After a stop, the objects dropped on the way out are finalized without a word: the
    signal may have landed inside a library's constructor (llvmlite's ObjectRef before it
    holds its handle), whose finalizer then fails, and Python would print that failure as
    an "Exception ignored" traceback after our one message."""
    sys.unraisablehook = lambda _unraisable: None


def _internal(err: Exception) -> int:
    if os.environ.get("ENZYME_BUILD_DEBUG"):
        raise err
    print(InternalError(f"{type(err).__name__}: {err}").render(), file=sys.stderr)
    return 2


def child_status(returncode: int, tool: str) -> int:
    """A tool's exit status as ours: a tool killed by a signal is said so (exit 128 + signal,
    as a shell reports it) instead of surfacing as a negative number modulo 256."""
    if returncode >= 0:
        return returncode
    import signal
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = f"signal {-returncode}"
    print(f"enzyme-build: error: {tool} was killed by {name}", file=sys.stderr, flush=True)
    return 128 - returncode
