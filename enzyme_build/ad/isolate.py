"""Derivative synthesis in a child process, so that its memory is gone before LLVM reads its output.

The synthesizer builds millions of small Python objects (the parsed functions, their
analyses, the emitted lines). Freed, they leave CPython's allocator arenas partly used, and
those are never returned to the system: on a 100k-instruction program the link process kept
about 130 MB it could not use, and LLVM's module of the AD output (about 120 MB) came on top
of that. The link's peak memory was that sum.

`synthesize` forks. The child inherits the AD input (no copy until written), differentiates
it, and writes the output text, piece by piece, into an anonymous temporary file; then it
exits, and its whole heap with it. The parent reads the file and hands it to LLVM. What the
child says on the way comes back through a pipe: the steps it reports (`progress.report`,
for the link's progress display and timing line) and, at the end, either "done" or the
exception it raised, which the parent raises as its own (a refusal keeps its message,
location and fix; a bug stays a bug).

Signals: the child takes the default action for SIGINT, SIGTERM and SIGHUP unless they are
ignored (none of the parent's cleanup runs in it), and is killed when the parent dies
(PR_SET_PDEATHSIG); the parent kills and reaps it if it is interrupted itself. A child
killed by a signal the parent did not get (the kernel's out-of-memory killer) is one error
naming the signal.
Where there is no fork, or the system has no process to spare, synthesis runs in the
process.
"""
from __future__ import annotations

import os
import pickle
import signal
import sys
import tempfile

from .. import progress
from ..errors import EnzymeBuildError, InternalError, Terminated

_STEP, _DONE, _FAILED = b"S", b"K", b"E"
PR_SET_PDEATHSIG = 1


def synthesize(run, *args) -> bytes:
    """`run(*args, sink=f)` writes the AD output to the binary file f; returns its bytes."""
    with tempfile.TemporaryFile(prefix="enzyme-build-ad-") as sink:
        pid = None
        if hasattr(os, "fork"):
            read_end, write_end = os.pipe()
            with progress.forking():   # no other thread of ours runs while we fork
                sys.stdout.flush()
                sys.stderr.flush()
                parent = os.getpid()
                try:
                    pid = os.fork()
                except OSError:   # no process to spare (EAGAIN, ENOMEM): synthesis runs here
                    os.close(read_end)
                    os.close(write_end)
                if pid == 0:
                    os.close(read_end)
                    _child(run, args, sink, write_end, parent)   # does not return
        if pid is None:
            run(*args, sink=sink)
        else:
            os.close(write_end)
            try:
                outcome = _follow(read_end)
                _, status = os.waitpid(pid, 0)
                pid = None
            finally:
                os.close(read_end)
                if pid is not None:   # interrupted while the child works: it goes too
                    _stop(pid)
            if outcome is None:
                raise _died(status)
            if outcome is not True:
                raise outcome
        sink.seek(0)
        return sink.read()


def _child(run, args, sink, channel: int, parent: int) -> None:
    code = 0
    try:
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            if signal.getsignal(signum) is not signal.SIG_IGN:   # `nohup`: ignored stays ignored
                signal.signal(signum, signal.SIG_DFL)
        _die_with_parent(parent)
        progress.replace_listeners([lambda step: _send(channel, _STEP + b" " + _line(step))])
        run(*args, sink=sink)
        sink.flush()
        _send(channel, _DONE + b"\n")
    except BaseException as err:   # everything goes back to the parent, bugs included
        code = 1
        if os.environ.get("ENZYME_BUILD_DEBUG"):
            import traceback
            traceback.print_exc()
        try:
            payload = pickle.dumps(err)
            pickle.loads(payload)
        except Exception:
            payload = pickle.dumps(InternalError(f"{type(err).__name__}: {err}"))
        try:
            _send(channel, _FAILED + b" %d\n" % len(payload) + payload)
        except OSError:
            pass
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _line(step: str) -> bytes:
    return step.replace("\n", " ").encode("utf-8", "replace") + b"\n"


def _send(channel: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(channel, view):]


def _follow(channel: int):
    """Read the child's messages to the end: steps are reported here; returns True (done),
    the child's exception, or None (it died without a word)."""
    buffer = b""
    outcome = None
    while True:
        chunk = os.read(channel, 1 << 16)
        if not chunk:
            return outcome
        buffer += chunk
        while True:
            if buffer.startswith(_FAILED + b" "):
                head, sep, rest = buffer.partition(b"\n")
                if not sep:
                    break
                size = int(head.split()[1])
                if len(rest) < size:
                    break
                outcome = pickle.loads(rest[:size])
                buffer = rest[size:]
                continue
            line, sep, rest = buffer.partition(b"\n")
            if not sep:
                break
            buffer = rest
            if line == _DONE:
                outcome = True
            elif line.startswith(_STEP + b" "):
                progress.report(line[2:].decode("utf-8", "replace"))


def _died(status: int) -> BaseException:
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        if signum == signal.SIGINT:
            return KeyboardInterrupt()
        if signum in (signal.SIGTERM, signal.SIGHUP):
            return Terminated(signum)
        try:
            name = signal.Signals(signum).name
        except ValueError:
            name = f"signal {signum}"
        hint = ("the system may have run out of memory: free some, or build on a machine with more"
                if signum == signal.SIGKILL else None)
        return EnzymeBuildError(f"derivative synthesis was killed by {name}", hint=hint)
    return InternalError(f"derivative synthesis ended with status {os.WEXITSTATUS(status)} without a result")


def _stop(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def _die_with_parent(parent: int) -> None:
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:   # the parent died before the request took effect
        os._exit(1)
