"""A compile-and-link with AD compiles its sources to lean fat objects.

The whole-program link absorbs such objects by their bitcode, so their native code is made
quickly from the unoptimized module (driver.LEAN_OBJECT_FLAGS). These tests hold the
promises that make that safe: the bitcode is what a full compile embeds; a wrong guess
(a source that mentions enzyme, linked natively) still links optimized code, with its
diagnostics shown once; a lean compile that fails is redone in full, silently.
"""
from __future__ import annotations

import glob
import os
import subprocess

import pytest

from enzyme_build import toolchain
from enzyme_build.frontend.driver import INCLUDE_DIR, LEAN_OBJECT_FLAGS
from enzyme_build.link import objfile

AD_MAIN = r"""
#include <stdio.h>
#include <enzyme/enzyme.h>
double helper(double x);
double f(double x) { return x * helper(x); }
int main(void) {
  double x = 0.7;
  printf("%.12f %.12f\n", __enzyme_autodiff((void *)f, x), helper(x) + x * 6 * x);
  return 0;
}
"""
HELPER = "double helper(double x) { double s = 0; for (int i = 0; i < 3; i++) s += x; return s * x; }\n"


def _bitcode(path: str) -> bytes:
    with open(path, "rb") as fh:
        bitcode = objfile.embedded_bitcode(fh.read())
    assert bitcode is not None, path
    return bitcode


def _size_of(ws, binary: str, symbol: str) -> int:
    out = ws.run(["nm", "-S", binary], check=True).stdout
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 4 and fields[3] == symbol:
            return int(fields[1], 16)
    raise AssertionError(f"{symbol} not in {binary}:\n{out}")


def test_ad_link_objects_are_lean_and_carry_the_full_compiles_bitcode(ws):
    ws.write("main.c", AD_MAIN)
    ws.write("helper.c", HELPER)   # mentions nothing of enzyme: lean too, the link needs no native code of it
    ws.write("tmp/.keep", "")
    env = {"ENZYME_BUILD_VERBOSE": "1", "ENZYME_BUILD_KEEP_TEMPS": "1", "TMPDIR": ws.file("tmp")}
    proc = ws.eb("-O2", "main.c", "helper.c", "-o", "prog", env=env, check=True)
    compiles = [line for line in proc.stderr.splitlines() if " -c " in line and "-fembed-bitcode=all" in line]
    assert len(compiles) == 2 and all("-disable-llvm-passes -mllvm -fast-isel" in c for c in compiles), \
        proc.stderr
    got, want = ws.exe("prog").stdout.split()
    assert abs(float(got) - float(want)) < 1e-9
    temps = glob.glob(ws.file("tmp/enzyme-build-*"))
    assert len(temps) == 1, temps
    ws.eb("-O2", "-c", "main.c", "helper.c", check=True)   # full fat objects, as `-c` makes them
    for k, stem in enumerate(("main", "helper")):
        assert _bitcode(os.path.join(temps[0], f"{k}-{stem}.o")) == _bitcode(ws.file(f"{stem}.o")), stem


def test_a_program_that_only_mentions_enzyme_links_optimized_native_code(ws):
    # the guess says lean (the comment), the bitcode says no AD: the native link must get
    # the optimized code clang would make, and the warning is shown once, not twice
    source = ("/* not differentiated by enzyme */\n"
              "double dot(const double *a, const double *b, int n) {\n"
              "  int unused;\n  double s = 0;\n"
              "  for (int i = 0; i < n; i++) s += a[i] * b[i];\n  return s;\n}\n"
              "int main(void) { double a[4] = {1, 2, 3, 4}; return (int)dot(a, a, 4) - 30; }\n")
    ws.write("p.c", source)
    proc = ws.eb("-O2", "-Wall", "p.c", "-o", "ours", env={"ENZYME_BUILD_VERBOSE": "1"}, check=True)
    assert proc.stderr.count("warning: unused variable 'unused'") == 1, proc.stderr
    assert any("-disable-llvm-passes" in line for line in proc.stderr.splitlines()), proc.stderr
    ws.exe("ours")
    clang = toolchain.clang_command(False)
    ws.run(clang + ["-O2", "-w", "p.c", "-o", "plain"], check=True)
    assert _size_of(ws, "ours", "dot") == _size_of(ws, "plain", "dot")


ASM = r"""
#include <stdio.h>
#include <math.h>
#include <enzyme/enzyme.h>
static inline __attribute__((always_inline)) void mark(int k) { __asm__ volatile("" :: "i"(k)); }
double f(double x) { mark(3); return x * x * sin(x); }
int main(void) {
  double x = 0.7;
  printf("%.12f %.12f\n", __enzyme_autodiff((void *)f, x), 2 * x * sin(x) + x * x * cos(x));
  return 0;
}
"""


def test_a_lean_compile_that_fails_is_redone_in_full_without_its_messages(ws):
    # an "i" operand is a constant only once the always_inline helper is inlined, which the
    # lean compile (no optimization pipeline) does not do: code generation fails there
    ws.write("asm.c", ASM)
    clang = toolchain.clang_command(False)
    lean = ws.run(clang + ["-O2", "-c", "asm.c", f"-I{INCLUDE_DIR}", "-o", "lean.o", *LEAN_OBJECT_FLAGS])
    assert lean.returncode != 0 and "constraint 'i'" in lean.stderr, lean.stderr
    proc = ws.eb("-O2", "asm.c", "-o", "prog", "-lm", check=True)
    assert proc.stderr == ""
    got, want = ws.exe("prog").stdout.split()
    assert abs(float(got) - float(want)) < 1e-9


def test_a_real_error_is_reported_once(ws):
    ws.write("bad.c", "#include <enzyme/enzyme.h>\nint main(void) { return undeclared; }\n")
    proc = ws.eb("-O2", "bad.c", "-o", "prog")
    assert proc.returncode == 1
    assert proc.stderr.count("use of undeclared identifier 'undeclared'") == 1, proc.stderr
    assert not ws.exists("prog")


@pytest.mark.parametrize("flags", [["-mllvm", "-inline-threshold=300"]])
def test_the_users_own_llvm_options_keep_full_objects(ws, flags):
    ws.write("main.c", AD_MAIN)
    ws.write("helper.c", HELPER)
    proc = ws.eb("-O2", *flags, "main.c", "helper.c", "-o", "prog", env={"ENZYME_BUILD_VERBOSE": "1"}, check=True)
    assert "-disable-llvm-passes" not in proc.stderr
    got, want = ws.exe("prog").stdout.split()
    assert abs(float(got) - float(want)) < 1e-9


def test_lean_flags_are_known_to_this_clang():
    # an LLVM option renamed in a later release would make every lean compile fail (and
    # silently fall back): check the flags compile a trivial file
    proc = subprocess.run(toolchain.clang_command(False) + ["-O2", "-x", "c", "-c", "-", "-o", os.devnull,
                                                            *LEAN_OBJECT_FLAGS],
                          input="int f(int x) { return x + 1; }\n", capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
