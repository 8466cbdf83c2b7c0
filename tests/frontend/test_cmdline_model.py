"""The command-line model itself: every option form, exact round trips, and the edge cases.

Each table row is a real clang command line (or a piece of one) and what the model must
read off it; every row is also checked to re-emit token for token.
"""
from __future__ import annotations

import pytest

from enzyme_build import cmdline as A
from enzyme_build.cmdline import (COMPILE_ONLY, DEPFILE, END_OF_OPTIONS, INPUT, LANGUAGE, LIBRARY,
                                  LINK_ONLY, LINKER, LTO, OPTION, OUTPUT, SEARCH_DIR)


def shape(argv):
    """(role, option, value, tokens) of every argument."""
    return [(a.role, a.option, a.value, a.tokens) for a in A.parse(argv).items]


# argv -> the arguments the model must see, in order
FORMS = [
    # output: separate and joined
    (["-o", "out"], [(OUTPUT, "-o", "out", ("-o", "out"))]),
    (["-oout"], [(OUTPUT, "-o", "out", ("-oout",))]),
    (["-o", "-"], [(OUTPUT, "-o", "-", ("-o", "-"))]),
    # language
    (["-x", "c++", "f"], [(LANGUAGE, "-x", "c++", ("-x", "c++")), (INPUT, None, "f", ("f",))]),
    (["-xc", "f"], [(LANGUAGE, "-x", "c", ("-xc",)), (INPUT, None, "f", ("f",))]),
    # actions
    (["-c"], [(COMPILE_ONLY, "-c", None, ("-c",))]),
    (["-S"], [(OPTION, "-S", None, ("-S",))]),
    (["-E"], [(OPTION, "-E", None, ("-E",))]),
    # clang's alias with two dashes takes its file as the next argument too
    (["--serialize-diagnostics", "d.dia", "f"], [
        (OPTION, "--serialize-diagnostics", "d.dia", ("--serialize-diagnostics", "d.dia")),
        (INPUT, None, "f", ("f",))]),
    # linker-passed
    (["-Wl,-rpath,/opt/lib,--as-needed"], [(LINKER, "-Wl,", "-rpath,/opt/lib,--as-needed",
                                            ("-Wl,-rpath,/opt/lib,--as-needed",))]),
    (["-Xlinker", "--defsym", "-Xlinker", "a=1"], [
        (LINKER, "-Xlinker", "--defsym", ("-Xlinker", "--defsym")),
        (LINKER, "-Xlinker", "a=1", ("-Xlinker", "a=1"))]),
    (["-u", "sym"], [(LINKER, "-u", "sym", ("-u", "sym"))]),
    (["-usym"], [(LINKER, "-u", "sym", ("-usym",))]),
    (["-e", "entry"], [(LINKER, "-e", "entry", ("-e", "entry"))]),
    (["-z", "now"], [(LINKER, "-z", "now", ("-z", "now"))]),
    (["-T", "x.ld"], [(LINKER, "-T", "x.ld", ("-T", "x.ld"))]),
    (["-Tx.ld"], [(LINKER, "-T", "x.ld", ("-Tx.ld",))]),
    # libraries and search dirs
    (["-L", "d"], [(SEARCH_DIR, "-L", "d", ("-L", "d"))]),
    (["-Ld"], [(SEARCH_DIR, "-L", "d", ("-Ld",))]),
    (["-l", "m"], [(LIBRARY, "-l", "m", ("-l", "m"))]),
    (["-lm"], [(LIBRARY, "-l", "m", ("-lm",))]),
    (["-l:libfoo.a"], [(LIBRARY, "-l", ":libfoo.a", ("-l:libfoo.a",))]),
    # link-only driver flags
    (["-shared"], [(LINK_ONLY, "-shared", None, ("-shared",))]),
    (["-static"], [(LINK_ONLY, "-static", None, ("-static",))]),
    (["-nostdlib"], [(LINK_ONLY, "-nostdlib", None, ("-nostdlib",))]),
    (["-rdynamic"], [(LINK_ONLY, "-rdynamic", None, ("-rdynamic",))]),
    (["-fuse-ld=lld"], [(LINK_ONLY, "-fuse-ld=", "lld", ("-fuse-ld=lld",))]),
    (["--ld-path=/usr/bin/ld.lld"], [(LINK_ONLY, "--ld-path=", "/usr/bin/ld.lld",
                                      ("--ld-path=/usr/bin/ld.lld",))]),
    (["-rtlib=compiler-rt"], [(LINK_ONLY, "-rtlib=", "compiler-rt", ("-rtlib=compiler-rt",))]),
    # dependency files
    (["-MD", "-MF", "x.d", "-MT", "t", "-MQ", "q", "-MP"], [
        (DEPFILE, "-MD", None, ("-MD",)), (DEPFILE, "-MF", "x.d", ("-MF", "x.d")),
        (DEPFILE, "-MT", "t", ("-MT", "t")), (DEPFILE, "-MQ", "q", ("-MQ", "q")),
        (DEPFILE, "-MP", None, ("-MP",))]),
    (["-MMD", "-MFx.d", "-MTt"], [
        (DEPFILE, "-MMD", None, ("-MMD",)), (DEPFILE, "-MF", "x.d", ("-MFx.d",)),
        (DEPFILE, "-MT", "t", ("-MTt",))]),
    # LTO
    (["-flto"], [(LTO, "-flto", None, ("-flto",))]),
    (["-flto=thin"], [(LTO, "-flto=", "thin", ("-flto=thin",))]),
    (["-fno-lto"], [(OPTION, "-fno-lto", None, ("-fno-lto",))]),
    # compile options, separate and joined
    (["-I", "inc", "-Iinc2"], [(OPTION, "-I", "inc", ("-I", "inc")),
                               (OPTION, "-I", "inc2", ("-Iinc2",))]),
    (["-D", "X=1", "-DY=2", "-UZ"], [(OPTION, "-D", "X=1", ("-D", "X=1")),
                                     (OPTION, "-D", "Y=2", ("-DY=2",)),
                                     (OPTION, "-U", "Z", ("-UZ",))]),
    (["-include", "pre.h", "-isystem", "/x"], [
        (OPTION, "-include", "pre.h", ("-include", "pre.h")),
        (OPTION, "-isystem", "/x", ("-isystem", "/x"))]),
    (["-Xclang", "-fembed-bitcode=all"], [(OPTION, "-Xclang", "-fembed-bitcode=all",
                                          ("-Xclang", "-fembed-bitcode=all"))]),
    (["-mllvm", "-inline-threshold=0"], [(OPTION, "-mllvm", "-inline-threshold=0",
                                         ("-mllvm", "-inline-threshold=0"))]),
    (["-std=c99", "-O2"], [(OPTION, "-std=", "c99", ("-std=c99",)), (OPTION, "-O2", None, ("-O2",))]),
    (["-target", "aarch64-linux-gnu"], [(OPTION, "-target", "aarch64-linux-gnu",
                                         ("-target", "aarch64-linux-gnu"))]),
    # longer options that only share a joined option's prefix
    (["-undef"], [(OPTION, "-undef", None, ("-undef",))]),
    (["-unwindlib=libgcc"], [(LINK_ONLY, "-unwindlib=", "libgcc", ("-unwindlib=libgcc",))]),
    (["-emit-llvm"], [(OPTION, "-emit-llvm", None, ("-emit-llvm",))]),
    # unknown options: one token each, passed on as they are
    (["--definitely-not-a-flag", "-fsome-future-thing=3"], [
        (OPTION, "--definitely-not-a-flag", None, ("--definitely-not-a-flag",)),
        (OPTION, "-fsome-future-thing=", "3", ("-fsome-future-thing=3",))]),
    # inputs, stdin and `--`
    (["-", "a.c", ""], [(INPUT, None, "-", ("-",)), (INPUT, None, "a.c", ("a.c",)),
                        (INPUT, None, "", ("",))]),
    (["-c", "--", "-weird.c", "--", "-o"], [
        (COMPILE_ONLY, "-c", None, ("-c",)), (END_OF_OPTIONS, None, None, ("--",)),
        (INPUT, None, "-weird.c", ("-weird.c",)), (INPUT, None, "--", ("--",)),
        (INPUT, None, "-o", ("-o",))]),
]


@pytest.mark.parametrize("argv,expected", FORMS, ids=[" ".join(f[0]) or "empty" for f in FORMS])
def test_option_forms(argv, expected):
    assert shape(argv) == expected


# Whole command lines as build systems write them: every one re-emits exactly.
REAL = [
    ["-O2", "-g", "-Wall", "-c", "src/main.c", "-o", "build/main.o"],
    ["-DNDEBUG", "-I/usr/include/foo", "-isystem", "/opt/inc", "-std=gnu11", "-fPIC", "-MD",
     "-MT", "obj/x.o", "-MF", "obj/x.o.d", "-o", "obj/x.o", "-c", "x.c"],
    ["-shared", "-Wl,-soname,libfoo.so.1", "-o", "libfoo.so.1.2", "a.o", "b.o", "-L/opt/lib",
     "-lbar", "-Wl,-rpath,/opt/lib", "-lm"],
    ["-O3", "main.c", "kernel.c", "-Wl,--whole-archive", "libk.a", "-Wl,--no-whole-archive",
     "-Wl,-Bstatic", "-lq", "-Wl,-Bdynamic", "-lz", "-o", "prog"],
    ["-fuse-ld=lld", "-flto=thin", "-Xlinker", "--gc-sections", "-u", "keep", "main.o", "-oprog"],
    ["-target", "x86_64-linux-gnu", "-m64", "-x", "c", "-", "-E"],
    ["-x", "c++", "a.inl", "-x", "none", "b.o", "-nostdlib", "-nostartfiles", "-e", "_start"],
    ["-c", "my file.c", "-o", "out dir/my file.o", "a$b.c", "it's \"q\".c"],
    ["-Xclang", "-load", "-Xclang", "plugin.so", "-mllvm", "-x86-asm-syntax=intel", "-c", "a.c"],
    ["--", "-dash.c", "plain.c"],
    ["-lm"],
    [],
]


@pytest.mark.parametrize("argv", REAL + [f[0] for f in FORMS])
def test_round_trip(argv):
    model = A.parse(argv)
    assert model.emit() == argv
    assert model.args == argv
    # each argument's tokens sit where its index says
    for arg in model.items:
        assert tuple(argv[arg.index:arg.index + len(arg.tokens)]) == arg.tokens


def test_modes():
    assert A.parse(["-c", "a.c"]).mode == "compile"
    assert A.parse(["a.c", "-o", "p"]).mode == "link"
    assert A.parse(["-E", "a.c"]).mode == "passthrough"
    assert A.parse(["-S", "a.c"]).mode == "passthrough"
    assert A.parse(["-flto", "-c", "a.c"]).mode == "passthrough"
    assert A.parse(["-o", "p", "-lprog"]).mode == "link"   # main may sit in the library
    assert A.parse(["-o", "p"]).mode == "passthrough"


def test_inputs_with_odd_names():
    argv = ["-c", "my file.c", "a$b.c", "it's \"q\".c", "-o", "out dir/x.o"]
    model = A.parse(argv)
    assert [(i.path, i.kind) for i in model.inputs] == [
        ("my file.c", "source"), ("a$b.c", "source"), ("it's \"q\".c", "source")]
    assert model.output == "out dir/x.o"
    assert model.emit() == argv


def test_dash_names_after_end_of_options():
    model = A.parse(["-c", "--", "-weird.c", "-"])
    assert [(i.path, i.kind) for i in model.inputs] == [("-weird.c", "source"), ("-", "stdin")]
    normal = model.without_end_of_options()
    assert normal.args == ["-c", "./-weird.c", "-"]
    assert normal.inputs[0].path == "./-weird.c"
    # options added later stay options: before `--` while there is one
    assert model.with_options(["-I/x"]).args == ["-c", "-I/x", "--", "-weird.c", "-"]
    assert normal.with_options(["-I/x"]).args == ["-c", "./-weird.c", "-", "-I/x"]
    # a compile command never spells an input as an option
    source = model.inputs[0]
    assert model.compile_command(source, "w.o") == ["-c", "./-weird.c", "-o", "w.o"]


def test_wl_with_commas_and_named_symbols():
    model = A.parse(["-Wl,--defsym=a=1,-u,first,--undefined=second", "-Xlinker", "-uthird",
                     "-e", "entry", "-ufourth", "-Wl,--export-dynamic", "-Wl,-e,start"])
    assert model.linker_words() == ["--defsym=a=1", "-u", "first", "--undefined=second",
                                    "-uthird", "-e", "entry", "-u", "fourth",
                                    "--export-dynamic", "-e", "start"]
    assert model.named_symbols() == {"first", "second", "third", "entry", "fourth", "start"}
    assert model.export_dynamic


@pytest.mark.parametrize("argv,exported", [
    (["-rdynamic", "a.o"], True), (["-Wl,-E", "a.o"], True), (["-Xlinker", "-export-dynamic", "a.o"], True),
    (["-Wl,--no-export-dynamic", "a.o"], False), (["a.o"], False)])
def test_export_dynamic(argv, exported):
    assert A.parse(argv).export_dynamic is exported


@pytest.mark.parametrize("option", ["-o", "-x", "-I", "-L", "-l", "-MF", "-Xlinker", "-Xclang",
                                    "-target", "-u", "-e", "-include"])
def test_missing_value_is_one_clear_error(option):
    with pytest.raises(A.CommandLineError) as err:
        A.parse(["-c", "a.c", option])
    assert err.value.render().startswith(
        f"enzyme-build: error: argument to '{option}' is missing (expected 1 value)")


def test_missing_output_through_the_wrapper(ws):
    ws.write("a.c", "int x;\n")
    proc = ws.eb("-c", "a.c", "-o")
    assert proc.returncode == 1
    assert "argument to '-o' is missing" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.count("error:") == 1
    assert not ws.exists("a.o")


def test_unknown_options_pass_through_unchanged():
    argv = ["--made-up", "-fnew-thing=2", "-Qweird", "a.c", "-o", "p"]
    model = A.parse(argv)
    assert model.compile_options(for_link=True) == ["--made-up", "-fnew-thing=2", "-Qweird"]
    link = model.link_command({model.inputs[0].index: "/tmp/a.o"})
    assert link.args == ["--made-up", "-fnew-thing=2", "-Qweird", "/tmp/a.o"]


def test_compile_command_for_one_source():
    model = A.parse(["-O2", "-x", "c", "k.txt", "-MD", "-MF", "d.d", "-lm", "-flto", "-shared",
                     "-Wl,-z,now", "-c", "b.c", "-o", "out"])
    k, b = model.sources
    assert model.compile_command(k, "k.o") == [
        "-O2", "-MD", "-MF", "d.d", "-lm", "-flto", "-shared", "-Wl,-z,now", "-c", "-x", "c",
        "k.txt", "-o", "k.o"]
    assert model.compile_command(b, "/t/b.o", for_link=True, extra=["-Qunused-arguments"]) == [
        "-O2", "-Qunused-arguments", "-c", "-x", "c", "b.c", "-o", "/t/b.o"]  # -x c still holds


def test_link_command_replaces_sources_by_objects():
    model = A.parse(["-O2", "main.c", "-x", "c", "util", "-x", "none", "lib.a", "-MMD", "-MFx.d",
                     "-L", "d", "-lm", "-o", "prog"])
    main, util = model.sources
    link = model.link_command({main.index: "/t/0-main.o", util.index: "/t/1-util.o"})
    assert link.args == ["-O2", "/t/0-main.o", "/t/1-util.o", "lib.a", "-L", "d", "-lm"]
    assert [(i.path, i.kind) for i in link.inputs] == [
        ("/t/0-main.o", "object"), ("/t/1-util.o", "object"), ("lib.a", "archive")]
    assert (link.search_dirs, link.libraries, link.output) == (["d"], ["m"], None)


def test_linked_files_carry_the_linker_state():
    model = A.parse(["a.o", "-Wl,--whole-archive", "libw.a", "-Wl,--no-whole-archive",
                     "-Wl,-Bstatic", "-lq", "-Wl,-Bdynamic", "-l", "z", "-Xlinker", "-Bstatic",
                     "-lr", "-"])
    assert [(f.path, f.library, f.whole_archive, f.static) for f in model.linked_files()] == [
        ("a.o", None, False, False), ("libw.a", None, True, False), (None, "q", False, True),
        (None, "z", False, False), (None, "r", False, True)]
    assert all(f.static for f in A.parse(["-static", "-lm", "a.o"]).linked_files())


def test_rewrite_linked_files():
    model = A.parse(["a.o", "-L", "d", "-l", "x", "b.o", "-Wl,--as-needed"])
    rewritten = model.rewrite_linked_files(
        lambda f: ["X"] if f.path == "a.o" else ([] if f.library == "x" else None))
    assert rewritten == ["X", "-L", "d", "b.o", "-Wl,--as-needed"]


def test_substitute_an_input():
    model = A.parse(["-x", "c", "-", "-c"])
    stdin = model.inputs[0]
    replaced = model.substitute({stdin.index: "/tmp/stdin"})
    assert replaced.args == ["-x", "c", "/tmp/stdin", "-c"]
    assert replaced.inputs[0].kind == "source" and replaced.mode == "compile"


def test_target_and_depfile_questions():
    model = A.parse(["--target=aarch64-linux-gnu", "-m64", "-target", "x", "--gcc-toolchain=/g",
                     "-MD", "-MP", "-MF", "d", "-MT", "t", "-c", "a.c"])
    assert model.target_flags() == ["--target=aarch64-linux-gnu", "-m64", "-target", "x",
                                    "--gcc-toolchain=/g"]
    assert model.depfile_flags() == ["-MD", "-MP"]
    assert (model.depfile, model.depfile_path, model.dep_targets) == (True, "d", ["-MT", "t"])
    assert not model.warnings_silenced
    assert A.parse(["-w", "-c", "a.c"]).warnings_silenced
    assert A.parse(["-Xclang", "-w", "-c", "a.c"]).warnings_silenced
    assert not A.parse(["-I", "-w", "-c", "a.c"]).warnings_silenced  # a directory named -w


# argv -> (vector_library(), approximate_math_functions())
MATH_OPTIONS = [
    (["-O2", "a.o"], (None, False)),
    (["-fveclib=libmvec", "-fveclib=none", "a.o"], ("none", False)),
    (["-fveclib=none", "-fveclib=libmvec", "a.o"], ("libmvec", False)),
    (["-fno-math-errno", "a.o"], (None, False)),          # errno only: no approximations
    (["-ffast-math", "a.o"], (None, True)),
    (["-Ofast", "a.o"], (None, True)),
    (["-funsafe-math-optimizations", "a.o"], (None, True)),
    (["-fapprox-func", "a.o"], (None, True)),
    (["-ffp-model=fast", "a.o"], (None, True)),
    (["-ffp-model=aggressive", "a.o"], (None, True)),
    (["-ffast-math", "-fno-fast-math", "a.o"], (None, False)),
    (["-ffast-math", "-fno-approx-func", "a.o"], (None, False)),
    (["-ffast-math", "-ffp-model=precise", "a.o"], (None, False)),
    (["-fno-approx-func", "-ffast-math", "a.o"], (None, True)),
    (["-I", "-ffast-math", "a.o"], (None, False)),         # a directory named -ffast-math
]


@pytest.mark.parametrize("argv,expected", MATH_OPTIONS)
def test_vector_library_and_approximate_math(argv, expected):
    model = A.parse(argv)
    assert (model.vector_library(), model.approximate_math_functions()) == expected


def test_no_default_libraries():
    assert not A.parse(["a.o", "-lm"]).no_default_libraries
    for flag in ("-nostdlib", "-nodefaultlibs", "-nolibc", "-ffreestanding"):
        assert A.parse([flag, "a.o"]).no_default_libraries


def test_passthrough_command_keeps_response_files(tmp_path):
    rsp = tmp_path / "args"
    rsp.write_text("-E a.c")
    model = A.from_argv([f"@{rsp}", "-DX"])
    assert model.args == ["-E", "a.c", "-DX"] and model.mode == "passthrough"
    assert model.passthrough_command(["-I/inc"]) == [f"@{rsp}", "-DX", "-I/inc"]
    assert model.passthrough_command([]) == [f"@{rsp}", "-DX"]
    ended = A.from_argv(["-E", "--", "-a.c"])
    assert ended.passthrough_command(["-I/inc"]) == ["-E", "-I/inc", "--", "-a.c"]
    # a `--` inside a response file: the expanded arguments, options before it
    rsp.write_text("-E -- -a.c")
    assert A.from_argv([f"@{rsp}"]).passthrough_command(["-I/inc"]) == [
        "-E", "-I/inc", "--", "-a.c"]


def test_response_file_cycle_is_a_command_line_error(tmp_path):
    loop = tmp_path / "loop"
    loop.write_text(f"@{loop}")
    with pytest.raises(A.CommandLineError):
        A.from_argv([f"@{loop}"])


def test_bstatic_region_picks_the_fat_archive(ws):
    """`-Wl,-Bstatic -lsq -Wl,-Bdynamic`: the linker reads libsq.a even with libsq.so next to
    it, so the link must look at the archive (whose member calls __enzyme_autodiff)."""
    ws.write("sq.c", "double sq(double x) { return x * x; }\n"
                     "double __enzyme_autodiff(void *, double);\n"
                     "double dsq(double x) { return __enzyme_autodiff((void *)sq, x); }\n")
    ws.write("plain.c", "double sq(double x) { return x * x; }\n"
                        "double dsq(double x) { return 0; }\n")
    ws.write("main.c", '#include <stdio.h>\ndouble dsq(double);\n'
                       'int main(void) { printf("%g\\n", dsq(3.0)); return 0; }\n')
    ws.eb("-O2", "-c", "sq.c", check=True)
    ws.run(["ar", "rcs", "libsq.a", "sq.o"], check=True)
    ws.run(["cc", "-shared", "-fPIC", "plain.c", "-o", "libsq.so"], check=True)
    proc = ws.eb("-O2", "main.c", "-L.", "-Wl,-Bstatic", "-lsq", "-Wl,-Bdynamic", "-o", "prog")
    assert proc.returncode == 0, proc.stderr
    assert ws.exe("prog").stdout == "6\n"
