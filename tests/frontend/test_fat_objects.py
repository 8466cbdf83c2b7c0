"""`-c` makes fat objects: native code plus the TU's bitcode; plain tools still link them."""
from __future__ import annotations

import subprocess

from frontend_helpers import has_bitcode

LIB_G = "int g(int x) { return 3 * x + 1; }\n"
LIB_H = "int h_unreferenced(int x) { return x - 7; }\n"
MAIN = '#include <stdio.h>\nint g(int);\nint main(void) { printf("%d\\n", g(13)); return 0; }\n'


def test_compile_makes_fat_object_that_plain_cc_links(ws):
    ws.write("g.c", LIB_G)
    ws.write("main.c", MAIN)
    ws.eb("-O2", "-c", "g.c", "-o", "g.o", check=True)
    assert has_bitcode(ws.file("g.o"))
    ws.run(["cc", "main.c", "g.o", "-o", "prog"], check=True)
    assert ws.exe("prog").stdout == "40\n"


def test_several_sources_get_clangs_object_names(ws):
    ws.write("g.c", LIB_G)
    ws.write("sub/h.c", LIB_H)
    ws.eb("-c", "g.c", "sub/h.c", check=True)
    assert has_bitcode(ws.file("g.o")) and has_bitcode(ws.file("h.o"))
    assert not ws.exists("sub/h.o")


def test_x_language_is_honoured(ws):
    ws.write("code.txt", LIB_G)
    ws.eb("-x", "c", "-c", "code.txt", "-o", "code.o", check=True)
    assert has_bitcode(ws.file("code.o"))


def test_enzyme_header_is_on_the_include_path(ws):
    ws.write("uses.c", "#include <enzyme/enzyme.h>\nint f(void) { return enzyme_dup; }\n")
    ws.eb("-c", "uses.c", check=True)
    assert has_bitcode(ws.file("uses.o"))


def _archive(ws):
    ws.write("g.c", LIB_G)
    ws.write("h.c", LIB_H)
    ws.write("main.c", MAIN)
    ws.eb("-O2", "-c", "g.c", "h.c", check=True)
    ws.run(["ar", "rcs", "libgh.a", "g.o", "h.o"], check=True)


def test_archive_of_fat_objects_links_with_plain_cc_and_wrapper(ws):
    _archive(ws)
    ws.run(["cc", "main.c", "-L.", "-lgh", "-o", "plain"], check=True)
    assert ws.exe("plain").stdout == "40\n"
    ws.eb("main.c", "libgh.a", "-o", "wrapped", check=True)
    assert ws.exe("wrapped").stdout == "40\n"


def test_whole_program_link_pulls_only_referenced_archive_members(ws):
    _archive(ws)
    # a global named __enzyme_* sends the link down the whole-program path without AD
    ws.write("main.c", MAIN.replace("int g(int);", "int g(int); int __enzyme_probe;"))
    ws.eb("-O1", "main.c", "-L.", "-lgh", "-o", "prog", env={"ENZYME_BUILD_KEEP": "keep"},
          check=True)
    assert ws.exe("prog").stdout == "40\n"
    pre = ws.read("keep/prog.pre-ad.ll")
    assert "define internal i32 @g(" in pre
    assert "h_unreferenced" not in pre
    assert "define dso_local i32 @main(" in pre


def test_whole_archive_members_are_all_pulled(ws):
    _archive(ws)
    ws.write("main.c", MAIN.replace("int g(int);", "int g(int); int __enzyme_probe;"))
    ws.eb("main.c", "-Wl,--whole-archive", "libgh.a", "-Wl,--no-whole-archive", "-o", "prog",
          env={"ENZYME_BUILD_KEEP": "keep"}, check=True)
    assert ws.exe("prog").stdout == "40\n"
    assert "h_unreferenced" in ws.read("keep/prog.pre-ad.ll")


def test_fast_path_link_matches_plain_clang(ws):
    ws.write("g.c", LIB_G)
    ws.write("main.c", MAIN)
    proc = ws.eb("-O2", "main.c", "g.c", "-o", "prog", env={"ENZYME_BUILD_VERBOSE": "1"},
                 check=True)
    assert ws.exe("prog").stdout == "40\n"
    assert "--trace" not in proc.stderr  # no whole-program work for a program without AD
    assert proc.stderr.count("-fembed-bitcode=all") == 2


def test_default_output_is_a_out(ws):
    ws.write("main.c", "int main(void) { return 3; }\n")
    ws.eb("main.c", check=True)
    assert subprocess.run([ws.file("a.out")]).returncode == 3


def test_single_name_entry_points(ws):
    """enzyme-cc / enzyme-c++ behave like `enzyme-build cc` / `c++` (for CC=, CXX=)."""
    import os
    import sys
    bin_dir = os.path.dirname(sys.executable)
    ws.write("g.c", LIB_G)
    ws.run([os.path.join(bin_dir, "enzyme-cc"), "-c", "g.c"], check=True)
    assert has_bitcode(ws.file("g.o"))
    ws.write("m.cc", '#include <cstdio>\nextern "C" int g(int);\n'
             'int main() { std::printf("%d\\n", g(1)); }\n')
    ws.run([os.path.join(bin_dir, "enzyme-c++"), "m.cc", "g.o", "-o", "prog"], check=True)
    assert ws.exe("prog").stdout == "4\n"


def test_whole_archive_with_a_native_member(ws):
    """Under --whole-archive the absorbed archive leaves the link; its native member is
    extracted in its place (and not loaded twice)."""
    _archive(ws)
    ws.write("k.s", ".globl native_k\nnative_k:\n  movl $5, %eax\n  ret\n")
    ws.eb("-c", "k.s", "-o", "k.o", check=True)
    ws.run(["ar", "rcs", "libmixed.a", "g.o", "h.o", "k.o"], check=True)
    ws.write("main.c", PROBE_MAIN)
    ws.eb("main.c", "-Wl,--whole-archive", "libmixed.a", "-Wl,--no-whole-archive", "-o", "prog",
          env={"ENZYME_BUILD_VERBOSE": "1"}, check=True)
    assert ws.exe("prog").stdout == "40 5\n"


PROBE_MAIN = """#include <stdio.h>
int g(int); int native_k(void); int __enzyme_probe;
int main(void) { printf("%d %d\\n", g(13), native_k()); return 0; }
"""
