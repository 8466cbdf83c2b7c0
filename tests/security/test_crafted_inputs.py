"""Crafted objects and archives: one clear message, a bounded time, nothing left behind.

The link reads archives and embedded bitcode that anyone may have made. A damaged fat
object once aborted the process inside LLVM (exit 134, its temporary directory left in
TMPDIR); a negative archive member size looped forever; a thin archive naming /dev/zero
read until memory ran out; `#1/xyz` names and self-referencing thin archives ended in
internal errors; a member name with `/` was used as a path.
"""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from crafted import crafted_archives, mutated_objects
from security_helpers import ENZYME_BUILD, no_traceback, run, write

AD_PROGRAM = """\
    #include <stdio.h>
    double __enzyme_autodiff(void *, ...);
    double cube(double x) { return x * x * x + 2.0 * x; }
    int main(void) { printf("%g\\n", __enzyme_autodiff((void *)cube, 3.0)); return 0; }
"""


@pytest.fixture
def work(tmp_path):
    """A directory with main.c compiled to a fat object, and a private TMPDIR to watch."""
    write(tmp_path, "main.c", AD_PROGRAM)
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    env = dict(os.environ, TMPDIR=str(tmpdir))
    result = run([ENZYME_BUILD, "cc", "-O2", "-c", "main.c", "-o", "main.o"], tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    return tmp_path, env, tmpdir


def test_damaged_bitcode_is_reported_not_fatal(work):
    """60 fat objects with 1-4 bytes of their bitcode changed: each links, or stops with
    exit 1 and one message; never an abort, never an internal error, no temp files left."""
    directory, env, tmpdir = work
    original = (directory / "main.o").read_bytes()
    verdicts = {"linked": 0, "malformed": 0, "crashed LLVM": 0, "other error": 0}
    for k, data in enumerate(mutated_objects(original, 60, seed=19)):
        obj = directory / f"m{k}.o"
        obj.write_bytes(data)
        result = run([ENZYME_BUILD, "cc", str(obj), "-o", f"m{k}"], directory, env=env, timeout=120)
        no_traceback(result)
        assert result.returncode in (0, 1), (k, result.returncode, result.stderr)
        assert os.listdir(tmpdir) == [], (k, os.listdir(tmpdir))
        if result.returncode == 0:
            verdicts["linked"] += 1
        elif "malformed embedded bitcode" in result.stderr:
            verdicts["malformed"] += 1
            verdicts["crashed LLVM"] += "LLVM crashed reading it" in result.stderr
        else:
            verdicts["other error"] += 1
        assert result.stderr.count("enzyme-build: error") <= 1, result.stderr
    # the corpus does reach the case this guards: LLVM itself dying on a damaged module
    assert verdicts["crashed LLVM"] >= 1, verdicts
    assert verdicts["malformed"] >= 30, verdicts


ARCHIVE_CASES = ["negative-size", "size-past-end", "size-not-a-number", "bsd-name-not-a-number",
                 "long-name-outside-table", "bad-header-end", "thin-dev-zero", "thin-self",
                 "member-name-with-slash"]


@pytest.mark.parametrize("case", ARCHIVE_CASES)
def test_crafted_archive_fails_cleanly_and_quickly(work, case):
    """The archive holds the program's own fat object, so the link must read it."""
    directory, env, tmpdir = work
    paths = crafted_archives(str(directory), (directory / "main.o").read_bytes())
    result = run([ENZYME_BUILD, "cc", paths[case], "-o", "prog"], directory, env=env, timeout=60)
    no_traceback(result)
    assert result.returncode == 1, result.stderr
    assert "malformed archive" in result.stderr or "ld" in result.stderr, result.stderr
    assert not os.path.exists(directory / "prog")
    assert os.listdir(tmpdir) == []


def test_member_names_are_never_paths(work):
    """A native member named `../x/evil.o` in a fat archive linked --whole-archive: the link
    extracts it under a name of its own, and nothing appears outside its temp directory."""
    directory, env, tmpdir = work
    write(directory, "native.c", "int native_helper(void) { return 7; }\n")
    clang = shutil.which("clang-22")
    subprocess.run([clang, "-c", "native.c", "-o", "native.o"], cwd=directory, check=True)
    from crafted import archive

    data = archive([("main.o/", (directory / "main.o").read_bytes()),
                    ("../x/evil.o/", (directory / "native.o").read_bytes())])
    (directory / "libmix.a").write_bytes(data)
    ranlib = shutil.which("llvm-ranlib-22") or shutil.which("ranlib")
    subprocess.run([ranlib, "libmix.a"], cwd=directory, check=True)
    result = run([ENZYME_BUILD, "cc", "-Wl,--whole-archive", "libmix.a", "-Wl,--no-whole-archive",
                  "-o", "prog"], directory, env=env, timeout=120)
    no_traceback(result)
    assert not os.path.exists(directory.parent / "x"), "a member name was used as a path"
    assert not os.path.exists(tmpdir.parent / "x")
    assert os.listdir(tmpdir) == []
    assert result.returncode == 0, result.stderr
    out = subprocess.run([str(directory / "prog")], capture_output=True, text=True)
    assert out.stdout.strip() == "29"


def test_a_given_object_is_checked_beside_sources_compiled_by_the_same_command(work):
    """`cc helper.c damaged.o -o prog`: the object this command compiled from helper.c skips
    the checking child (clang's output of a moment ago, in the command's own temp directory),
    the object the user gave does not: its damage is named as in a link of objects alone."""
    directory, env, tmpdir = work
    write(directory, "helper.c", "double twice(double x) { return 2 * x; }\n")
    original = (directory / "main.o").read_bytes()
    damaged = None
    for k, data in enumerate(mutated_objects(original, 30, seed=23)):
        obj = directory / f"d{k}.o"
        obj.write_bytes(data)
        alone = run([ENZYME_BUILD, "cc", str(obj), "-o", f"d{k}"], directory, env=env, timeout=120)
        if alone.returncode == 1 and "malformed embedded bitcode in" in alone.stderr:
            damaged = obj
            break
    assert damaged is not None, "no mutation of the object was malformed"
    mixed = run([ENZYME_BUILD, "cc", "helper.c", str(damaged), "-o", "mixed"], directory, env=env, timeout=120)
    no_traceback(mixed)
    assert mixed.returncode == 1, mixed.stderr
    assert f"malformed embedded bitcode in {damaged}" in mixed.stderr, mixed.stderr
    assert os.listdir(tmpdir) == []
    fine = run([ENZYME_BUILD, "cc", "-O2", "main.c", "helper.c", "-o", "fine"], directory, env=env, timeout=120)
    assert fine.returncode == 0, fine.stderr
    assert subprocess.run([str(directory / "fine")], capture_output=True, text=True).stdout.strip() == "29"
