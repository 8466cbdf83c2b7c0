"""A long link shows its stages on a terminal and a timing line with ENZYME_BUILD_VERBOSE=1;
build logs (no terminal) stay as clang leaves them."""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess

import pytest

from test_failure_handling import AD_PROGRAM, ENZYME_BUILD, big_program

STAGES = ("trial link", "inputs", "bitcode", "derivatives", "optimization", "code generation",
          "system link")


@pytest.fixture
def small_object(tmp_path):
    (tmp_path / "main.c").write_text(AD_PROGRAM)
    subprocess.run([ENZYME_BUILD, "cc", "-O2", "-c", "main.c"], cwd=tmp_path, check=True)
    return tmp_path


def test_no_terminal_no_progress(small_object):
    result = subprocess.run([ENZYME_BUILD, "cc", "-O2", "main.o", "-o", "prog"], cwd=small_object,
                            capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert result.returncode == 0
    assert result.stdout == "" and result.stderr == ""


def test_verbose_prints_one_timing_line(small_object):
    env = dict(os.environ, ENZYME_BUILD_VERBOSE="1")
    result = subprocess.run([ENZYME_BUILD, "cc", "-O2", "main.o", "-o", "prog"], cwd=small_object,
                            capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    summary = [line for line in result.stderr.splitlines() if line.startswith("enzyme-build: linked prog in")]
    assert len(summary) == 1, result.stderr
    for stage in STAGES:
        assert f"{stage} " in summary[0], summary[0]
    # the AD stage names each derivative it synthesizes; the slowest are listed
    slowest = [line for line in result.stderr.splitlines() if line.startswith("enzyme-build: slowest steps:")]
    assert len(slowest) == 1 and "gradient of f " in slowest[0], result.stderr


@pytest.mark.skipif(shutil.which("script") is None, reason="util-linux `script` gives a terminal")
def test_terminal_shows_the_stages_of_a_link(tmp_path):
    """ENZYME_BUILD_PROGRESS_DELAY=0 shows the stages at once (by default after 1 s)."""
    big_program(tmp_path / "big.c", functions=20)
    subprocess.run([ENZYME_BUILD, "cc", "-O2", "-c", "big.c"], cwd=tmp_path, check=True)
    log = tmp_path / "typescript"
    command = shlex.join([ENZYME_BUILD, "cc", "-O2", "big.o", "-o", "prog", "-lm"])
    env = dict(os.environ, ENZYME_BUILD_PROGRESS_DELAY="0")
    done = subprocess.run(["script", "-qec", command, str(log)], cwd=tmp_path, capture_output=True,
                          stdin=subprocess.DEVNULL, timeout=600, env=env)
    assert done.returncode == 0, done.stdout
    screen = log.read_bytes().decode("utf-8", "replace")
    shown = {stage for stage in STAGES if f"linking prog: {stage}" in screen}
    assert shown, screen[-2000:]
    assert (tmp_path / "prog").is_file()
    assert subprocess.run([str(tmp_path / "prog")], capture_output=True).returncode == 0


def test_a_fork_happens_with_no_display_thread_running(monkeypatch):
    """Derivative synthesis forks (ad/isolate.py): the live display's threads stop first, so
    the child cannot inherit a lock one of them held, and start again in the parent."""
    import threading
    import time

    from enzyme_build import progress
    from enzyme_build.link.progress import LinkProgress
    monkeypatch.setenv("ENZYME_BUILD_PROGRESS_DELAY", "0")
    shown = LinkProgress("prog", verbose=False, live=True)
    try:
        deadline = time.monotonic() + 10
        while shown._status is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert shown._status is not None and threading.active_count() > 1
        with progress.forking():
            assert threading.active_count() == 1, threading.enumerate()
        deadline = time.monotonic() + 10
        while shown._status is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert shown._status is not None   # shown again
    finally:
        shown.finish()
    with progress.forking():   # a finished display is no longer paused or resumed
        pass
    assert shown._status is None
