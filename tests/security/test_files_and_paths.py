"""Files enzyme-build creates: never through a planted symlink, never in another user's
directory, never under a name another run uses; tools never pinned from a relative PATH."""
from __future__ import annotations

import os
import shutil
import stat
import subprocess

import pytest

from security_helpers import ENZYME_BUILD, PWNED, no_traceback, pwned_files, run, write

AD_PROGRAM = """\
    #include <stdio.h>
    #include <enzyme/enzyme.h>
    double helper(double x);
    double f(double x) { return x * helper(x); }
    int main(void) { printf("%g\\n", __enzyme_autodiff((void *)f, 2.0)); return 0; }
"""
HELPER = "double helper(double x) { return 3.0 * x; }\n"  # f = 3x^2, f'(2) = 12


@pytest.fixture
def program(tmp_path):
    write(tmp_path, "main.c", AD_PROGRAM)
    write(tmp_path, "helper.c", HELPER)
    return tmp_path


def last_pid() -> int:
    with open("/proc/sys/kernel/ns_last_pid") as fh:
        return int(fh.read())


def test_depfile_is_not_written_through_a_planted_symlink(program):
    """The dependency file was first written to `<dep>.enzyme-tmp<PID>`, a name anyone can
    guess and plant a link at; the link's target was overwritten."""
    victim = program / "victim.txt"
    victim.write_text("precious\n")
    start = last_pid()
    for pid in range(start + 1, start + 400):
        os.symlink(victim, program / f"prog.d.enzyme-tmp{pid}")
    result = run([ENZYME_BUILD, "cc", "-O2", "-MD", "main.c", "helper.c", "-o", "prog"], program)
    no_traceback(result)
    assert result.returncode == 0, result.stderr
    assert victim.read_text() == "precious\n"
    depfile = program / "prog.d"
    assert not depfile.is_symlink() and "main.c" in depfile.read_text()
    assert oct(stat.S_IMODE(depfile.stat().st_mode)) == oct(0o666 & ~_umask())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_output_replaces_a_symlink_instead_of_writing_through_it(program):
    victim = program / "victim.txt"
    victim.write_text("precious\n")
    os.symlink(victim, program / "prog")
    result = run([ENZYME_BUILD, "cc", "-O2", "main.c", "helper.c", "-o", "prog"], program)
    assert result.returncode == 0, result.stderr
    assert victim.read_text() == "precious\n"
    assert not (program / "prog").is_symlink()
    assert subprocess.run([str(program / "prog")], capture_output=True, text=True).stdout.strip() == "12"
    assert [f for f in os.listdir(program) if ".tmp" in f] == []


def test_output_in_a_missing_directory_names_the_users_path(program):
    result = run([ENZYME_BUILD, "cc", "-O2", "main.c", "helper.c", "-o", "missing/dir/prog"], program)
    no_traceback(result)
    assert result.returncode == 1
    assert "missing/dir/prog" in result.stderr and "enzyme-tmp" not in result.stderr


# --- ENZYME_BUILD_KEEP ---------------------------------------------------------------------

def keep_run(program, keep, output="prog"):
    env = dict(os.environ, ENZYME_BUILD_KEEP=str(keep))
    return run([ENZYME_BUILD, "cc", "-O2", "main.c", "helper.c", "-o", output], program, env=env)


def test_keep_under_a_regular_file_is_a_clear_error(program):
    (program / "afile").write_text("x")
    result = keep_run(program, program / "afile" / "keep")
    no_traceback(result)
    assert result.returncode == 1 and "ENZYME_BUILD_KEEP" in result.stderr
    assert not (program / "prog").exists()


def test_keep_writable_by_others_is_refused(program):
    keep = program / "shared"
    keep.mkdir()
    keep.chmod(0o777)
    victim = program / "victim.txt"
    victim.write_text("precious\n")
    os.symlink(victim, keep / "prog.pre-ad.ll")  # what another user could plant there
    result = keep_run(program, keep)
    no_traceback(result)
    assert result.returncode == 1 and "writable by other users" in result.stderr
    assert victim.read_text() == "precious\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a directory to another user needs root")
def test_keep_of_another_user_is_refused(program):
    keep = program / "theirs"
    keep.mkdir(mode=0o700)
    os.chown(keep, 65534, 65534)
    result = keep_run(program, keep)
    no_traceback(result)
    assert result.returncode == 1 and "belongs to another user" in result.stderr


def test_keep_files_are_named_per_output_and_replace_links(program):
    """Two links into one KEEP directory keep both sets of files; a symlink left in the
    user's own KEEP directory is replaced, not written through."""
    keep = program / "keep"
    victim = program / "victim.txt"
    victim.write_text("precious\n")
    keep.mkdir(mode=0o700)
    os.symlink(victim, keep / "one.pre-ad.ll")
    assert keep_run(program, keep, "one").returncode == 0
    assert keep_run(program, keep, "two").returncode == 0
    assert victim.read_text() == "precious\n"
    for output in ("one", "two"):
        assert not (keep / f"{output}.pre-ad.ll").is_symlink()
        assert "define" in (keep / f"{output}.pre-ad.ll").read_text()
        assert (keep / f"{output}.ad" / "ad-input.ll").is_file()
        assert (keep / f"{output}.ad" / "ad-output.ll").is_file()


def test_keep_is_created_private(program):
    keep = program / "new" / "keep"
    assert keep_run(program, keep).returncode == 0
    assert stat.S_IMODE(keep.stat().st_mode) & 0o077 == 0


# --- tools and arguments ------------------------------------------------------------------

FAKE_CLANG = """\
#!/bin/sh
# a clang-22 planted in a directory: reports the right version, leaves a mark when used
if [ "$1" = "--version" ]; then echo "clang version 22.1.8"; exit 0; fi
touch "$(dirname "$0")/{pwned}_clang"
exec {real} "$@"
"""


def test_tool_found_through_a_relative_path_entry_is_not_remembered(tmp_path):
    """PATH=":/usr/bin…" makes `clang-22` in the current directory win there; the found
    tool used to be cached by absolute path and then used from every other directory."""
    real = shutil.which("clang-22")
    planted = tmp_path / "checkout"
    elsewhere = tmp_path / "elsewhere"
    for directory in (planted, elsewhere):
        write(directory, "x.c", "int x(void) { return 1; }\n")
    fake = planted / "clang-22"
    fake.write_text(FAKE_CLANG.format(pwned=PWNED, real=real))
    fake.chmod(0o755)
    env = dict(os.environ, PATH=":" + os.environ["PATH"], XDG_CACHE_HOME=str(tmp_path / "cache"))
    env.pop("ENZYME_BUILD_CLANG", None)
    env.pop("ENZYME_BUILD_LLVM_BIN", None)
    first = run([ENZYME_BUILD, "cc", "-c", "x.c"], planted, env=env)
    assert first.returncode == 0, first.stderr
    for marker in pwned_files(planted):
        os.unlink(marker)
    second = run([ENZYME_BUILD, "cc", "-c", "x.c"], elsewhere, env=env)
    assert second.returncode == 0, second.stderr
    assert pwned_files(planted) == [], "the planted clang ran from another directory"
    cache = tmp_path / "cache" / "enzyme-build" / "toolchain.json"
    assert not cache.exists() or str(planted) not in cache.read_text()


def test_end_of_options_marker_keeps_the_wrappers_own_options(program):
    """`cc -O2 -o prog -- main.c -helper.c`: after `--` every word is an input; the wrapper's
    own `-c -o tmp.o` and bitcode flags once landed there and were read as file names."""
    os.rename(program / "helper.c", program / "-helper.c")
    result = run([ENZYME_BUILD, "cc", "-O2", "-o", "prog", "--", "main.c", "-helper.c"], program)
    no_traceback(result)
    assert result.returncode == 0, result.stderr
    assert subprocess.run([str(program / "prog")], capture_output=True, text=True).stdout.strip() == "12"
    result = run([ENZYME_BUILD, "cc", "-O2", "-c", "--", "-helper.c"], program)
    assert result.returncode == 0, result.stderr
    assert (program / "-helper.o").is_file()
