"""Invocations the wrapper hands to clang untouched: same output, same exit code."""
from __future__ import annotations

import subprocess

import pytest
from frontend_helpers import has_bitcode

from enzyme_build import toolchain

SRC = "#define TWICE(x) ((x) * 2)\nint f(int x) { return TWICE(x); }\n"


def clang(ws, *args, input=None):
    return ws.run([toolchain.find("clang").path, *args], input=input)


def test_preprocess_only(ws):
    ws.write("a.c", SRC)
    ours, theirs = ws.eb("-E", "a.c"), clang(ws, "-E", "a.c")
    assert ours.returncode == 0 and "((x) * 2)" in ours.stdout
    assert ours.stdout == theirs.stdout


def test_assembly_output(ws):
    ws.write("a.c", SRC)
    ws.eb("-O2", "-S", "a.c", "-o", "a.s", check=True)
    assert "f:" in ws.read("a.s") and ".llvmbc" not in ws.read("a.s")


@pytest.mark.parametrize("flag", ["-M", "-MM"])
def test_dependency_listing_alone(ws, flag):
    ws.write("inc.h", "#define K 1\n")
    ws.write("a.c", '#include "inc.h"\nint k = K;\n')
    proc = ws.eb(flag, "a.c", check=True)
    assert proc.stdout.replace("\\\n", " ").split()[:3] == ["a.o:", "a.c", "inc.h"]
    assert not ws.exists("a.o")


def test_stdin_source(ws):
    proc = ws.eb("-x", "c", "-c", "-", "-o", "stdin.o", input=SRC)
    assert proc.returncode == 0, proc.stderr
    assert ws.exists("stdin.o")


@pytest.mark.parametrize("name,text", [
    ("k.s", ".globl k\nk:\n  ret\n"),
    ("k.S", "#define NAME k\n.globl NAME\nNAME:\n  ret\n"),
])
def test_assembly_input(ws, name, text):
    ws.write(name, text)
    ws.eb("-c", name, "-o", "k.o", check=True)
    assert not has_bitcode(ws.file("k.o"))
    ws.write("main.c", "void k(void);\nint main(void) { k(); return 5; }\n")
    ws.eb("main.c", name, "-o", "prog", check=True)  # asm mixed into a link
    assert subprocess.run([ws.file("prog")]).returncode == 5


def test_user_lto_is_untouched(ws):
    ws.write("a.c", SRC)
    proc = ws.eb("-flto", "-c", "a.c", "-o", "a.o", env={"ENZYME_BUILD_VERBOSE": "1"},
                 check=True)
    assert "-fembed-bitcode" not in proc.stderr
    with open(ws.file("a.o"), "rb") as fh:
        assert fh.read(4) == b"BC\xc0\xde"  # plain LTO bitcode, as clang makes it


@pytest.mark.parametrize("args", [["--version"], ["-dumpmachine"], ["-dumpversion"],
                                  ["-print-libgcc-file-name"], ["-print-search-dirs"]])
def test_queries_match_clang(ws, args):
    ours, theirs = ws.eb(*args), clang(ws, *args)
    assert (ours.returncode, ours.stdout) == (theirs.returncode, theirs.stdout)


def test_verbose_without_inputs(ws):
    proc = ws.eb("-v")
    assert proc.returncode == 0 and "clang version" in proc.stderr


def test_hash_hash_hash_prints_commands_only(ws):
    ws.write("a.c", SRC)
    proc = ws.eb("-###", "-c", "a.c")
    assert proc.returncode == 0 and '"-cc1"' in proc.stderr
    assert not ws.exists("a.o")


def test_configure_only_is_plain_clang(ws):
    ws.write("a.c", SRC)
    ws.eb("-c", "a.c", env={"ENZYME_BUILD_CONFIGURE_ONLY": "1"}, check=True)
    assert not has_bitcode(ws.file("a.o"))


def test_response_files_nested_and_quoted(ws):
    ws.write("dir with space/g.c", "int g(void) { return GVAL; }\n")
    ws.write("main.c", "int g(void);\nint main(void) { return g(); }\n")
    ws.write("inner.rsp", "'-DGVAL=6'\n")
    ws.write("outer.rsp", '"dir with space/g.c" @inner.rsp -o prog\n')
    ws.eb("main.c", "@outer.rsp", check=True)
    assert subprocess.run([ws.file("prog")]).returncode == 6


def test_configure_style_probe(ws):
    """What autoconf does first: compile and run conftest.c to a.out, in one command."""
    ws.write("conftest.c", "int main(void) { return 0; }\n")
    ws.eb("-g", "-O2", "conftest.c", check=True)
    assert subprocess.run([ws.file("a.out")]).returncode == 0
    proc = ws.eb("-v", "-c", "conftest.c")  # CMake's ABI probe reads clang's -v output
    assert proc.returncode == 0 and "clang version" in proc.stderr


def test_cxx_driver_links_libstdcxx(ws):
    ws.write("a.cc", '#include <iostream>\nint main() { std::cout << "hi" << std::endl; }\n')
    ws.eb("a.cc", "-o", "prog", cxx=True, check=True)
    assert ws.exe("prog").stdout == "hi\n"
