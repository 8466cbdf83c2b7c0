"""The clang-argument model: inputs, languages, actions, and rebuilding per-source commands."""
from __future__ import annotations

import pytest

from enzyme_build import cmdline as A


def kinds(argv):
    return [(i.path, i.kind, i.lang) for i in A.parse(argv).inputs]


def test_inputs_and_option_values_are_told_apart():
    assert kinds(["-I", "inc", "-o", "out", "-MF", "x.d", "a.c", "b.o", "libz.a", "libq.so.1",
                  "-include", "pre.h", "-Xlinker", "-Map=m", "-lm", "-L", "lib", "s.S"]) == [
        ("a.c", "source", None), ("b.o", "object", None), ("libz.a", "archive", None),
        ("libq.so.1", "shared", None), ("s.S", "asm", None)]


def test_x_language_applies_until_x_none():
    assert kinds(["-x", "c", "code.txt", "-xc++", "u.inc", "-x", "none", "obj.o"]) == [
        ("code.txt", "source", "c"), ("u.inc", "source", "c++"), ("obj.o", "object", None)]


@pytest.mark.parametrize("argv,reason", [
    (["-E", "a.c"], "-E"), (["-S", "a.c"], "-S"), (["-M", "a.c"], "-M"),
    (["-MM", "a.c"], "-MM"), (["-c", "-"], "input from stdin"), (["-flto=thin", "-c", "a.c"], "-flto=thin"),
    (["--version"], "--version"), (["-print-prog-name=ld"], "-print-prog-name=ld"),
    (["-v"], "no input files"), (["-c", "k.s"], "nothing to compile to bitcode"),
    (["-c", "a.c", "b.c", "-o", "x.o"], "-o with several sources (clang reports it)"),
])
def test_passthrough_decisions(argv, reason):
    assert A.parse(argv).passthrough_reason == reason


@pytest.mark.parametrize("argv", [["-c", "a.c"], ["a.c", "-o", "p"], ["-MD", "-c", "a.c"],
                                  ["-fno-lto", "a.c"], ["main.o", "-lm"]])
def test_our_cases_are_not_passed_through(argv):
    assert A.parse(argv).passthrough_reason is None


def test_flags_that_steer_the_link():
    inv = A.parse(["-O3", "-shared", "-oout.so", "-Wl,--export-dynamic", "a.c", "-MMD",
                      "-MFdeps.d", "-MT", "t"])
    assert (inv.opt_level, inv.shared, inv.output, inv.export_dynamic) == ("3", True, "out.so", True)
    assert (inv.depfile, inv.depfile_path, inv.dep_targets) == (True, "deps.d", ["-MT", "t"])


def test_compile_options_for_per_source_compiles():
    argv = ["-O2", "-Iinc", "a.c", "-o", "p", "-x", "c", "b.txt", "-lm", "-L", "d",
            "-Wl,-rpath,/x", "-MD", "-MF", "p.d", "-shared", "-DX=1"]
    assert A.parse(argv).compile_options(for_link=True) == ["-O2", "-Iinc", "-DX=1"]
    assert A.parse(argv).compile_options() == [
        "-O2", "-Iinc", "-lm", "-L", "d", "-Wl,-rpath,/x", "-MD", "-MF", "p.d", "-shared",
        "-DX=1"]


def test_response_file_tokenizer():
    text = 'a "b c" \'d "e"\' f\\ g "h\\"i" \n\t-DX="1 2"'
    assert A.split_response_text(text) == ["a", "b c", 'd "e"', "f g", 'h"i', "-DX=1 2"]


def test_response_files_expand_recursively_and_keep_unknown_at(tmp_path):
    (tmp_path / "inner").write_text("-O2 'x y.c'")
    (tmp_path / "outer").write_text(f"-c @{tmp_path / 'inner'} -g")
    assert A.expand_response_files([f"@{tmp_path / 'outer'}", "@missing"]) == [
        "-c", "-O2", "x y.c", "-g", "@missing"]


def test_response_file_cycle_is_an_error(tmp_path):
    loop = tmp_path / "loop"
    loop.write_text(f"@{loop}")
    with pytest.raises(RecursionError):
        A.expand_response_files([f"@{loop}"])
