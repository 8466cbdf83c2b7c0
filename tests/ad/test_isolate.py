"""Derivative synthesis runs in a forked child (ad/isolate.py): its output, its errors, its
progress reports and its signals reach the parent as if it had run there, and its memory
does not."""
from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from enzyme_build import progress
from enzyme_build.ad import isolate
from enzyme_build.errors import EnzymeBuildError


def test_output_steps_and_order_come_back():
    def run(*, sink):
        for k in range(3):
            progress.report(f"gradient of f{k}")
            sink.write(b"piece %d\n" % k)
    steps: list[str] = []
    with progress.listening(steps.append):
        out = isolate.synthesize(run)
    assert out == b"piece 0\npiece 1\npiece 2\n"
    assert steps == ["gradient of f0", "gradient of f1", "gradient of f2"]


def test_a_refusal_keeps_its_message_location_and_fix():
    def run(*, sink):
        raise EnzymeBuildError("cannot differentiate through 'g'", location="g.c:3", hint="write a rule")
    with pytest.raises(EnzymeBuildError) as caught:
        isolate.synthesize(run)
    err = caught.value
    assert (err.message, err.location, err.hint) == ("cannot differentiate through 'g'", "g.c:3", "write a rule")
    assert type(err) is EnzymeBuildError


def test_a_bug_stays_a_bug():
    def run(*, sink):
        raise KeyError("missing")
    with pytest.raises(KeyError, match="missing"):
        isolate.synthesize(run)


def test_a_large_message_is_not_cut_by_the_pipe():
    words = "x" * 300_000   # several pipe buffers
    def run(*, sink):
        raise EnzymeBuildError(words)
    with pytest.raises(EnzymeBuildError) as caught:
        isolate.synthesize(run)
    assert caught.value.message == words


def test_a_child_killed_by_the_system_is_named():
    def run(*, sink):
        os.kill(os.getpid(), signal.SIGKILL)
    with pytest.raises(EnzymeBuildError, match="derivative synthesis was killed by SIGKILL") as caught:
        isolate.synthesize(run)
    assert "memory" in caught.value.hint


def test_the_childs_memory_is_not_the_parents():
    """What the child allocates (here 400 MB, touched) never counts in the parent's peak."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    def run(*, sink):
        block = bytearray(400 << 20)
        block[::4096] = b"x" * len(block[::4096])
        sink.write(b"%d\n" % len(block))
    assert isolate.synthesize(run) == b"%d\n" % (400 << 20)
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown < 100 << 10, f"the parent's peak grew by {grown} KB"


SCRIPT = textwrap.dedent("""
    import os, sys, time
    from enzyme_build.ad import isolate
    from enzyme_build.errors import handle_termination
    handle_termination()
    def run(*, sink):
        print(os.getpid(), flush=True)
        time.sleep(60)
    try:
        isolate.synthesize(run)
    except BaseException as err:
        print(type(err).__name__, flush=True)
        raise SystemExit(3)
""")


def _start(tmp_path, disposition=None):
    script = tmp_path / "synth.py"
    script.write_text(SCRIPT)
    pre = (lambda: signal.signal(signal.SIGHUP, disposition)) if disposition is not None else None
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                            preexec_fn=pre)
    child = int(proc.stdout.readline())
    return proc, child


def _gone(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                if fh.read().split(") ")[1].startswith("Z"):
                    return True   # a zombie: dead, waiting for init
        except OSError:
            return True
        time.sleep(0.05)
    return False


def test_a_terminated_parent_takes_the_child_with_it(tmp_path):
    proc, child = _start(tmp_path)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 3 and "Terminated" in out, out
    assert _gone(child)


def test_a_killed_parent_takes_the_child_with_it(tmp_path):
    proc, child = _start(tmp_path)
    proc.kill()
    proc.wait(timeout=30)
    assert _gone(child)


def test_an_ignored_hangup_stays_ignored_in_the_child(tmp_path):
    proc, child = _start(tmp_path, signal.SIG_IGN)
    os.kill(child, signal.SIGHUP)
    time.sleep(0.5)
    assert proc.poll() is None and not _gone(child, within=0.2)
    proc.kill()
    proc.wait(timeout=30)


def test_without_a_process_to_spare_synthesis_runs_here(monkeypatch):
    import errno

    def no_fork():
        raise OSError(errno.EAGAIN, "Resource temporarily unavailable")
    monkeypatch.setattr(os, "fork", no_fork)
    parent = os.getpid()

    def run(*, sink):
        progress.report("gradient of f")
        sink.write(b"%d\n" % os.getpid())
    steps: list[str] = []
    with progress.listening(steps.append):
        assert isolate.synthesize(run) == b"%d\n" % parent
    assert steps == ["gradient of f"]
    with pytest.raises(EnzymeBuildError, match="refused here"):
        isolate.synthesize(lambda *, sink: (_ for _ in ()).throw(EnzymeBuildError("refused here")))
