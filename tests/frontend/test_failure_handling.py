"""Every way a link can be stopped or fail: one clear message, no traceback, no temporary
files or partial output left. Through real subprocesses, as a build system runs us."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

BIN_DIR = os.path.dirname(sys.executable)
ENZYME_BUILD = os.path.join(BIN_DIR, "enzyme-build")

AD_PROGRAM = """\
#include <stdio.h>
#include <enzyme/enzyme.h>
double f(double x) { return 3.0 * x * x; }
int main(void) { printf("%g\\n", __enzyme_autodiff((void *)f, 2.0)); return 0; }
"""


def run(args, cwd, env=None, stdin=subprocess.DEVNULL, timeout=300):
    return subprocess.run([ENZYME_BUILD, "cc", *args], cwd=str(cwd), env=env, stdin=stdin,
                          capture_output=True, timeout=timeout)


def text(result) -> str:
    return (result.stdout + result.stderr).decode("utf-8", "replace")


def clean(result) -> None:
    out = text(result)
    assert "Traceback" not in out and "internal error" not in out, out


def private_tmp(tmp_path):
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    return tmpdir, dict(os.environ, TMPDIR=str(tmpdir))


# --- a full TMPDIR ------------------------------------------------------------------------

@pytest.fixture
def small_tmpfs(tmp_path):
    """A mounted tmpfs of a given size, unmounted afterwards (needs root, as CI runs)."""
    mounts = []

    def make(size_kb: int):
        point = tmp_path / f"tmpfs{size_kb}"
        point.mkdir()
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", str(point)],
                              capture_output=True)
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
        mounts.append(point)
        return point

    yield make
    for point in mounts:
        subprocess.run(["umount", str(point)])


@pytest.mark.parametrize("size_kb", [16, 20, 24, 28, 32, 48])
def test_full_tmpdir_during_the_link(tmp_path, small_tmpfs, size_kb):
    (tmp_path / "main.c").write_text(AD_PROGRAM)
    compiled = run(["-O2", "-c", "main.c"], tmp_path)
    assert compiled.returncode == 0, text(compiled)
    tiny = small_tmpfs(size_kb)
    env = dict(os.environ, TMPDIR=str(tiny))
    result = run(["-O2", "main.o", "-o", "prog"], tmp_path, env=env)
    clean(result)
    if result.returncode == 0:  # it fitted: then it must be right
        assert subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True).stdout == "12\n"
    else:
        assert "space" in text(result).lower(), text(result)
        assert not (tmp_path / "prog").exists()
    assert os.listdir(tiny) == []


# --- signals ------------------------------------------------------------------------------

def big_program(path, functions: int = 400) -> None:
    """A program whose compile and link take a while (for a signal to arrive meanwhile)."""
    lines = ["#include <stdio.h>", "#include <math.h>", "#include <enzyme/enzyme.h>"]
    for k in range(functions):
        lines.append(f"double f{k}(const double *x, int n) {{ double s = 0; "
                     f"for (int i = 0; i < n; i++) s += sin(x[i] * {k + 1}.0) * exp(-x[i]) "
                     f"+ (i % 3 ? x[i] * x[i] : cos(x[i])); return s; }}")
    body = " + ".join(f"f{k}(x, n)" for k in range(functions))
    lines.append(f"double total(const double *x, int n) {{ return {body}; }}")
    lines.append("int main(void) { double x[4] = {1, 2, 3, 4}, d[4] = {0};"
                 " __enzyme_autodiff((void *)total, enzyme_dup, x, d, enzyme_const, 4);"
                 " printf(\"%g\\n\", d[0]); return 0; }")
    path.write_text("\n".join(lines) + "\n")


def children_mentioning(marker: str) -> list[int]:
    """Live processes whose command line names `marker` (our private TMPDIR)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if marker.encode() in fh.read():
                    found.append(int(pid))
        except OSError:
            continue
    return found


def start_big_build(tmp_path, signum, disposition):
    """Start building big.c with `signum` set to `disposition` in the build; return it and its
    private TMPDIR once it is well inside the compile or the link."""
    big_program(tmp_path / "big.c")
    tmpdir, env = private_tmp(tmp_path)
    proc = subprocess.Popen([ENZYME_BUILD, "cc", "-O2", "big.c", "-o", "prog", "-lm"], cwd=tmp_path,
                            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=lambda: signal.signal(signum, disposition))
    deadline = time.monotonic() + 60
    while not os.listdir(tmpdir) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.5)  # well inside the compile or the link
    assert proc.poll() is None, "the build finished before the signal could be sent"
    return proc, tmpdir


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_signal_stops_the_build_and_leaves_nothing(tmp_path, signum):
    # the build gets the signal's default disposition whatever this test runs under (a CI
    # job started by `nohup`, or in the background of a shell without job control, inherits
    # SIGHUP or SIGINT ignored, and the build rightly keeps an inherited ignore: below)
    proc, tmpdir = start_big_build(tmp_path, signum, signal.SIG_DFL)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=60)
    message = (out + err).decode("utf-8", "replace")
    assert "Traceback" not in message and "internal error" not in message, message
    assert proc.returncode == 128 + signum, (proc.returncode, message)
    time.sleep(0.2)
    assert children_mentioning(str(tmpdir)) == []
    assert os.listdir(tmpdir) == []
    assert not (tmp_path / "prog").exists()
    assert [f for f in os.listdir(tmp_path) if f.startswith(".prog")] == []


FINALIZER_AFTER_STOP = r"""
import sys
from enzyme_build.errors import Terminated, run_guarded
kept = []
class HalfBuilt:   # what an interrupt inside a library's constructor leaves (llvmlite's ObjectRef)
    def __del__(self):
        raise AttributeError("no handle yet")
def build(stop):
    kept.append(HalfBuilt())
    raise stop
code = run_guarded(build, KeyboardInterrupt() if sys.argv[1] == "int" else Terminated(15))
kept.clear()
sys.exit(code)
"""


@pytest.mark.parametrize("how, code, said", [("int", 130, "enzyme-build: interrupted"),
                                             ("term", 143, "enzyme-build: stopped by SIGTERM")])
def test_a_stop_prints_no_finalizer_noise(how, code, said):
    """An interrupt that lands inside a library's constructor leaves an object whose finalizer
    fails on the way out: one message still, no "Exception ignored" traceback after it (a
    SIGINT test of the whole build once printed llvmlite's)."""
    r = subprocess.run([sys.executable, "-c", FINALIZER_AFTER_STOP, how], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == code and r.stderr.strip() == said, (r.returncode, r.stderr)


def test_a_hangup_ignored_by_the_caller_stays_ignored(tmp_path):
    """`nohup enzyme-build ...`: a SIGHUP the caller ignores does not stop the build."""
    proc, tmpdir = start_big_build(tmp_path, signal.SIGHUP, signal.SIG_IGN)
    proc.send_signal(signal.SIGHUP)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, (out + err).decode("utf-8", "replace")
    assert (tmp_path / "prog").exists() and os.listdir(tmpdir) == []


# --- tools dying, odd names, stdin ----------------------------------------------------------

CRASHING_CLANG = """#!/bin/sh
if [ "$1" = "--version" ]; then exec {real} --version; fi
kill -SEGV $$
"""


def test_clang_killed_by_a_signal_is_said_so(tmp_path):
    import shutil
    fake = tmp_path / "clang-22"
    fake.write_text(CRASHING_CLANG.format(real=shutil.which("clang-22")))
    fake.chmod(0o755)
    (tmp_path / "main.c").write_text(AD_PROGRAM)
    env = dict(os.environ, ENZYME_BUILD_CLANG=str(fake), XDG_CACHE_HOME=str(tmp_path / "cache"))
    result = run(["-O2", "-c", "main.c"], tmp_path, env=env)
    clean(result)
    assert result.returncode == 128 + signal.SIGSEGV
    assert "killed by SIGSEGV" in text(result)


def test_file_names_that_are_not_utf8(tmp_path):
    """Bytes that are not UTF-8 are legal in POSIX file names: sources and objects named so
    build, and the link finds their bitcode."""
    name = b"caf\xe9"
    directory = os.fsencode(str(tmp_path))
    with open(os.path.join(directory, name + b".c"), "w") as fh:
        fh.write(AD_PROGRAM)
    source, obj, exe = (os.fsdecode(name + suffix) for suffix in (b".c", b".o", b""))
    result = run(["-O2", "-c", source, "-o", obj], tmp_path)
    clean(result)
    assert result.returncode == 0, text(result)
    result = run(["-O2", obj, "-o", exe], tmp_path)
    clean(result)
    assert result.returncode == 0, text(result)
    out = subprocess.run([os.path.join(directory, name)], capture_output=True, text=True)
    assert out.stdout == "12\n"
    result = run(["-O2", source, "-o", exe + "2"], tmp_path)
    assert result.returncode == 0, text(result)


def test_program_read_from_stdin_gets_its_derivatives(tmp_path):
    tmpdir, env = private_tmp(tmp_path)
    result = subprocess.run([ENZYME_BUILD, "cc", "-O2", "-x", "c", "-", "-o", "prog"], cwd=tmp_path,
                            env=env, input=AD_PROGRAM.encode(), capture_output=True, timeout=300)
    clean(result)
    assert result.returncode == 0, text(result)
    assert subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True).stdout == "12\n"
    result = subprocess.run([ENZYME_BUILD, "cc", "-O2", "-c", "-x", "c", "-"], cwd=tmp_path, env=env,
                            input=AD_PROGRAM.encode(), capture_output=True, timeout=300)
    assert result.returncode == 0, text(result)
    assert (tmp_path / "-.o").is_file()
    assert os.listdir(tmpdir) == []
