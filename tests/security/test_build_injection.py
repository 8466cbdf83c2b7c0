"""`enzyme-build build` hands every user value to SCons and the shell as data.

Names of sources, directories and outputs, and the flags given on the command line, may
hold backticks, `$`, `${…}` (which SCons would evaluate as Python), `;`, quotes and spaces.
Nothing may run; each value must reach clang exactly as written. Both routes: the
generated SConstruct (`enzyme-build build SRC… -o OUT`) and a user's SConstruct that picks
sources with Glob() (`--project`).
"""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys

import pytest

from security_helpers import ENZYME_BUILD, PWNED, no_traceback, pwned_files, run, write

# Each name tries to create a PWNED file through one mechanism.
HOSTILE_NAMES = [
    "a`touch PWNED_backtick`",
    'x${__import__("os").system("touch PWNED_python")}',
    "e$HOME",
    "s p;touch PWNED_semicolon",
    "q\"uote'$(touch PWNED_subshell)",
    "dol$$lar.v1",
]

MAIN = """\
    #include <stdio.h>
    #define STR2(x) #x
    #define STR(x) STR2(x)
    int helper(void);
    int main(void) { printf("%s|%s|%s|%d\\n", MSG, STR(X), STR(Y), helper()); return 0; }
"""
HELPER = "int helper(void) { return 42; }\n"


def expected_line(x: str, y: str, msg: str = "hello world") -> str:
    return f"{msg}|{x}|{y}|42"


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_hostile_source_directory_and_output_names_build_literally(tmp_path, name):
    """A source, an include directory and the output named `name`: built, nothing run."""
    write(tmp_path, "main.c", MAIN.replace("int helper(void);", '#include "h.h"\n    int helper(void);'))
    write(tmp_path, f"{name}.c", HELPER)
    write(tmp_path, f"inc{name}/h.h", "#define UNUSED 1\n")
    out = f"out{name}"
    result = run([ENZYME_BUILD, "build", "main.c", f"{name}.c", "-I", f"inc{name}",
                  "-D", "MSG=\"hello world\"", "-D", "X=1", "-D", "Y=2", "-O2", "-o", out], tmp_path)
    no_traceback(result)
    assert result.returncode == 0, result.stdout + result.stderr
    assert pwned_files(tmp_path) == []
    program = subprocess.run([os.path.join(tmp_path, out)], capture_output=True, text=True)
    assert program.stdout.strip() == expected_line("1", "2")
    # the object keeps the source's exact name ($ included)
    objects = os.listdir(os.path.join(tmp_path, ".enzyme-build", out, "obj"))
    assert f"{name}.o" in objects


def test_hostile_flags_reach_clang_as_written(tmp_path):
    """-D with `;`/`>`, a quoted define with a space, a --cflag with a backtick and `$HOME`,
    and `$ORIGIN` in an rpath: each one clang/ld argument, nothing run, `$` kept."""
    write(tmp_path, "main.c", MAIN)
    write(tmp_path, "helper.c", HELPER)
    result = run([ENZYME_BUILD, "build", "main.c", "helper.c",
                  "-D", f"X=1;touch {PWNED}_define>f", "-D", "MSG=\"hello world\"",
                  "--cflag", f"-DY=`touch {PWNED}_cflag`$HOME",
                  "--ldflag", "-Wl,-rpath,$ORIGIN:/opt/x", "-o", "prog"], tmp_path)
    no_traceback(result)
    assert result.returncode == 0, result.stdout + result.stderr
    assert pwned_files(tmp_path) == [] and not os.path.exists(tmp_path / "f")
    program = subprocess.run([os.path.join(tmp_path, "prog")], capture_output=True, text=True)
    assert program.stdout.strip() == expected_line(f"1;touch {PWNED}_define>f",
                                                   f"`touch {PWNED}_cflag`$HOME")
    readelf = shutil.which("llvm-readelf-22") or "readelf"
    dynamic = subprocess.run([readelf, "-d", str(tmp_path / "prog")], capture_output=True,
                             text=True).stdout
    assert "[$ORIGIN:/opt/x]" in dynamic, dynamic


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_glob_picked_hostile_names_in_a_project(tmp_path, name):
    """The documented template: sources picked by Glob('src/*.c'), an include directory
    named by the user: nothing runs, every file compiles under its own name."""
    write(tmp_path, "src/main.c", MAIN.replace("int helper(void);", '#include "h.h"\n    int helper(void);'))
    write(tmp_path, f"src/{name}.c", HELPER)
    write(tmp_path, f"inc{name}/h.h", "#define UNUSED 1\n")
    # The SConstruct's own text keeps SCons' rules (shell quoting inside a define it writes
    # itself); the names it finds (Glob: the sources, the include directory) are data.
    write(tmp_path, "SConstruct", "import enzyme_build.scons as eb\n"
          "inc = Glob('inc*')[0]\n"
          "env = eb.Environment(CFLAGS=['-O2'], CPPPATH=[inc],\n"
          "                     CPPDEFINES=[('MSG', r'\\\"hello world\\\"'), ('X', 1), ('Y', 2)])\n"
          "env.EnzymeProgram('prog', Glob('src/*.c'))\n")
    result = run([ENZYME_BUILD, "build", "--project", "SConstruct"], tmp_path)
    no_traceback(result)
    assert pwned_files(tmp_path) == []
    assert result.returncode == 0, result.stdout + result.stderr
    assert os.path.isfile(tmp_path / "src" / f"{name}.o")
    program = subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True)
    assert program.stdout.strip() == expected_line("1", "2")


@pytest.mark.parametrize("output", [".", "..", "sub/", "sub/.."])
def test_output_naming_a_directory_is_refused(tmp_path, output):
    """`-o ..` once wrote the generated SConstruct over the user's own ./SConstruct."""
    (tmp_path / "sub").mkdir()
    write(tmp_path, "main.c", "int main(void) { return 0; }\n")
    write(tmp_path, "SConstruct", "# the user's own\n")
    result = run([ENZYME_BUILD, "build", "main.c", "-o", output], tmp_path)
    no_traceback(result)
    assert result.returncode == 1
    assert "names a directory" in result.stderr
    assert (tmp_path / "SConstruct").read_text() == "# the user's own\n"


def test_world_writable_cache_dir_is_warned_about(tmp_path):
    write(tmp_path, "main.c", "int main(void) { return 0; }\n")
    cache = tmp_path / "cache"
    cache.mkdir()
    cache.chmod(0o777)
    result = run([ENZYME_BUILD, "build", "main.c", "-o", "prog", "--cache-dir", str(cache)], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "writable by other users" in result.stderr and "docs/security.md" in result.stderr
    cache.chmod(0o700)
    (tmp_path / "main.c").write_text("int main(void) { return 1; }\n")
    result = run([ENZYME_BUILD, "build", "main.c", "-o", "prog", "--cache-dir", str(cache)], tmp_path)
    assert result.returncode == 0 and "writable by other users" not in result.stderr


def test_installation_path_with_a_space_and_a_dollar(tmp_path):
    """enzyme-build installed under `/…/my tools$x/` still builds through SCons: the
    wrapper's own path is one quoted word in every command."""
    venv = tmp_path / "my tools$x" / "venv"
    bindir = venv / "bin"
    bindir.mkdir(parents=True)
    real_prefix = sys.prefix
    with open(os.path.join(real_prefix, "pyvenv.cfg")) as fh:
        (venv / "pyvenv.cfg").write_text(fh.read())
    os.symlink(os.path.realpath(sys.executable), bindir / "python")
    site = [p for p in sys.path if p.startswith(real_prefix) and p.endswith("site-packages")][0]
    libdir = venv / os.path.relpath(os.path.dirname(site), real_prefix)
    libdir.mkdir(parents=True)
    os.symlink(site, libdir / "site-packages")
    python = str(bindir / "python")
    for script, entry in (("enzyme-cc", "main_cc"), ("enzyme-c++", "main_cxx")):
        path = bindir / script
        path.write_text(f"#!/bin/sh\nexec '{python}' -c 'from enzyme_build.cli.cc import {entry}; "
                        f"{entry}()' \"$@\"\n")
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    project = tmp_path / "project"
    write(project, "main.c", MAIN)
    write(project, "helper.c", HELPER)
    env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    result = run([python, "-m", "enzyme_build", "build", "main.c", "helper.c", "-D", "MSG=\"hello world\"",
                  "-D", "X=1", "-D", "Y=2", "-o", "prog", "-v"], project, env=env)
    no_traceback(result)
    assert result.returncode == 0, result.stdout + result.stderr
    program = subprocess.run([str(project / "prog")], capture_output=True, text=True)
    assert program.stdout.strip() == expected_line("1", "2")
