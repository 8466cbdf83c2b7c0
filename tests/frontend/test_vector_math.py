"""Vector math in the final pipeline: glibc's libmvec when the link's options ask for it
(-fveclib=libmvec) or allow approximate math functions (-ffast-math & co.), never with
-fveclib=none, and -lmvec on the final link exactly when the program calls it
(docs/build-performance.md, "Vector math")."""
from __future__ import annotations

import re
import subprocess

import pytest

from enzyme_build import toolchain
from enzyme_build.link import objfile, wholeprogram
from enzyme_build.llvm import vecmath

LIBMVEC = objfile.find_library("mvec", objfile.library_search_dirs([]), static_only=False)
HOST = subprocess.run(["uname", "-m"], capture_output=True, text=True).stdout.strip()

pytestmark = pytest.mark.skipif(HOST != "x86_64" or LIBMVEC is None,
                                reason="glibc's libmvec for x86-64 is not installed")

# The differentiated loop calls exp and log; its reverse loop writes dx[i] (no reduction),
# so the vectorizer widens it whenever the calls cannot set errno.
PROGRAM = r"""
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <enzyme/enzyme.h>

__attribute__((noinline)) double f(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += exp(0.5 * x[i]) * log(2.0 + x[i] * x[i]);
  return s;
}

/* the derivative lands here (or in a function of its own), never in f or main */
__attribute__((noinline)) void grad(const double *x, double *dx, int n) {
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, n);
}

int main(void) {
  enum { N = 1003 };
  static double x[N], dx[N];
  for (int i = 0; i < N; i++) x[i] = (i % 17) * 0.125 - 1.0;
  grad(x, dx, N);
  double worst = 0;
  for (int i = 0; i < N; i += 97) {
    double xi = x[i], h = 1e-6;
    x[i] = xi + h; double up = f(x, N);
    x[i] = xi - h; double down = f(x, N);
    x[i] = xi;
    double fd = (up - down) / (2 * h), err = fabs(fd - dx[i]) / fmax(1.0, fabs(fd));
    if (err > worst) worst = err;
  }
  printf("worst %.3g\n", worst);
  return worst < 1e-6 ? 0 : 1;
}
"""

_CALL = re.compile(r"call[^@\n]*@(_ZGV\w+)\(")


def vector_calls_by_function(ir: str) -> dict[str, set[str]]:
    """The libmvec functions each defined function of the IR calls."""
    out: dict[str, set[str]] = {}
    current = None
    for line in ir.splitlines():
        if line.startswith("define "):
            current = re.search(r"@([\w.$\"]+)\(", line).group(1)
        elif line.startswith("}"):
            current = None
        elif current is not None:
            for name in _CALL.findall(line):
                out.setdefault(current, set()).add(name)
    return out


def build(ws, *flags, env=None):
    """Build PROGRAM with the flags (verbose, IR kept); returns (final link line, post-AD
    IR, the program's dynamic symbols, its needed libraries) after checking the gradient."""
    ws.write("grad.c", PROGRAM)
    keep = ws.file("keep")
    proc = ws.eb(*flags, "grad.c", "-o", "grad", "-lm",
                 env={"ENZYME_BUILD_VERBOSE": "1", "ENZYME_BUILD_KEEP": keep, **(env or {})},
                 check=True)
    assert "worst" in ws.exe("grad").stdout                   # (a): exit 0: finite differences agree
    link_line = [line for line in proc.stderr.splitlines() if "grad." in line and ".tmp" in line][-1]
    ir = ws.read("keep/grad.post-ad.ll")
    binary = objfile.read_file(ws.file("grad"))
    needed = subprocess.run(["readelf", "-d", ws.file("grad")], capture_output=True, text=True).stdout
    return link_line, ir, objfile.dynamic_symbols(binary), needed


@pytest.mark.parametrize("flags,env", [
    (["-O2", "-fno-math-errno", "-fveclib=libmvec"], {}),
    (["-O2", "-ffast-math"], {}),                               # the default: approximations allowed
    (["-O3", "-fno-math-errno", "-fveclib=libmvec"], {"ENZYME_BUILD_IN_PROCESS": "1"}),
], ids=["fveclib", "ffast-math", "fveclib-in-process"])
def test_differentiated_loop_calls_libmvec(ws, flags, env):
    link_line, ir, symbols, needed = build(ws, *flags, env=env)
    calls = vector_calls_by_function(ir)
    # (b): the derivative's loop calls the SSE2 variants (baseline x86-64: nothing wider)
    derivative = {name: found for name, found in calls.items() if name not in ("f", "main")}
    assert {"_ZGVbN2v_exp", "_ZGVbN2v_log"} <= set().union(*derivative.values()), calls
    assert all(name.startswith("_ZGVb") for found in calls.values() for name in found), calls
    assert {"_ZGVbN2v_exp", "_ZGVbN2v_log"} <= symbols        # in the linked program too
    tokens = link_line.split()
    at = tokens.index("-lmvec")
    assert tokens[at + 1] == "-lm" and at > tokens.index(next(t for t in tokens if t.endswith("whole-program.o")))
    assert "libmvec.so" in needed


@pytest.mark.parametrize("flags", [
    ["-O2", "-ffast-math", "-fveclib=none"],                    # (c)
    ["-O2", "-fno-math-errno"],                                 # errno off alone: clang's results
    ["-O2", "-fveclib=libmvec"],                                # calls may set errno: kept scalar
    ["-O2", "-fveclib=libmvec", "-ffast-math", "-fveclib=none"],
], ids=["fveclib-none", "fno-math-errno", "math-errno", "last-fveclib-wins"])
def test_no_libmvec_calls_and_no_lmvec(ws, flags):
    link_line, ir, symbols, needed = build(ws, *flags)
    assert not vector_calls_by_function(ir)
    assert not any(name.startswith("_ZGV") for name in symbols)
    assert "-lmvec" not in link_line.split()                   # (d)
    assert "libmvec" not in needed


def test_unknown_fveclib_is_one_error(ws):
    ws.write("grad.c", PROGRAM)
    ws.eb("-O2", "-c", "grad.c", check=True)
    proc = ws.eb("grad.o", "-fveclib=fastest", "-o", "grad")
    assert proc.returncode == 1 and "unsupported -fveclib=fastest" in proc.stderr
    assert "Traceback" not in proc.stderr and not ws.exists("grad")


def plan_for(ws, *args):
    return wholeprogram.LinkPlan(driver=toolchain.clang_command(), output=ws.file("p"),
                                 link_args=["p.o", *args], tmpdir=ws.path)


@pytest.mark.parametrize("args,expected", [
    ([], None),
    (["-fno-math-errno"], None),
    (["-ffast-math"], "LIBMVEC"),
    (["-Ofast"], "LIBMVEC"),
    (["-ffast-math", "-fno-approx-func"], None),
    (["-ffast-math", "-fveclib=none"], None),
    (["-ffast-math", "-nostdlib"], None),
    (["-ffast-math", "-ffreestanding"], None),
    (["-fveclib=libmvec"], "LIBMVEC"),
    (["-fveclib=libmvec", "-nostdlib"], "LIBMVEC"),              # asked for: honoured
    (["-fveclib=SVML"], "SVML"),
    (["-fveclib=SLEEF"], "sleefgnuabi"),
])
def test_choose_vector_library(ws, args, expected):
    assert wholeprogram.choose_vector_library(plan_for(ws, *args), "x86_64-pc-linux-gnu") == expected


def test_default_needs_x86_64_glibc(ws):
    plan = plan_for(ws, "-ffast-math")
    for triple in ("aarch64-unknown-linux-gnu", "x86_64-pc-linux-musl", "x86_64-unknown-linux-gnux32",
                   "i386-pc-linux-gnu", "x86_64-apple-macosx14.0.0", ""):
        assert wholeprogram.choose_vector_library(plan, triple) is None, triple
    assert wholeprogram.choose_vector_library(plan, "x86_64-linux-gnu") == "LIBMVEC"


def test_installed_libmvec_defines_what_llvm_calls():
    """The default relies on it (glibc 2.35 or later); Debian 12 has 2.36."""
    assert vecmath.LIBMVEC_X86_64 <= objfile.defined_dynamic_symbols(objfile.read_file(LIBMVEC))


def test_vector_math_libraries_follow_the_object(tmp_path):
    calls = tmp_path / "calls.o"
    plain = tmp_path / "plain.o"
    for path, body in ((calls, "__m128d _ZGVbN2v_exp(__m128d);\n"
                               "__m128d g(__m128d x) { return _ZGVbN2v_exp(x); }\n"),
                       (plain, "double g(double x) { return x; }\n")):
        src = tmp_path / "s.c"
        src.write_text("#include <emmintrin.h>\n" + body)
        subprocess.run([*toolchain.clang_command(), "-c", str(src), "-o", str(path)], check=True)
    assert wholeprogram.vector_math_libraries("LIBMVEC", str(calls)) == ["-lmvec", "-lm"]
    assert wholeprogram.vector_math_libraries("LIBMVEC", str(plain)) == []
    assert wholeprogram.vector_math_libraries(None, str(calls)) == []


def cpu_has(flag: str) -> bool:
    try:
        with open("/proc/cpuinfo") as fh:
            return any(line.startswith("flags") and flag in line.split() for line in fh)
    except OSError:
        return False


# no AD: a global named __enzyme_* routes the link through the whole-program pipeline
MAP = r"""
#include <math.h>
int __enzyme_probe;
__attribute__((noinline)) void v(double *restrict y, const double *restrict x, int n) {
  for (int i = 0; i < n; i++) y[i] = exp(x[i]);
}
int main(void) {
  static double x[64], y[64];
  v(y, x, 64);
  return y[63] != 1.0;
}
"""


@pytest.mark.parametrize("march,variants", [(None, {"_ZGVbN2v_exp"}), ("x86-64-v3", {"_ZGVdN4v_exp"})])
def test_target_features_choose_the_variants(ws, march, variants):
    """A baseline x86-64 build calls only the SSE2 variants; the AVX2 ones need the user's
    -march (or -mavx2)."""
    ws.write("map.c", MAP)
    flags = ["-O2", "-ffast-math"] + ([f"-march={march}"] if march else [])
    ws.eb(*flags, "map.c", "-o", "map", env={"ENZYME_BUILD_KEEP": ws.file("keep")}, check=True)
    assert set().union(*vector_calls_by_function(ws.read("keep/map.post-ad.ll")).values()) == variants
    if march is None or cpu_has("avx2"):
        ws.exe("map")


# Two shapes for which LLVM 22 picks the AVX2 variant in baseline x86-64 code (its argument
# then travels in memory, not in ymm0): the SLP vectorizer's horizontal reduction of four
# exp() under -ffast-math, and a float loop calling the double exp() (VF 4).
WIDE = r"""
#include <math.h>
#include <stdio.h>
#include <enzyme/enzyme.h>

__attribute__((noinline)) double sum4(const double *x) {
  return exp(x[0]) + exp(x[1]) + exp(x[2]) + exp(x[3]);
}

__attribute__((noinline)) void widen(float *restrict out, const float *restrict in, int n) {
  for (int i = 0; i < n; i++) out[i] = (float)exp((double)in[i]);
}

int main(void) {
  double x[4] = {0.1, 0.2, 0.3, 0.4}, dx[4] = {0, 0, 0, 0};
  __enzyme_autodiff((void *)sum4, enzyme_dup, x, dx);
  static float in[64], out[64];
  for (int i = 0; i < 64; i++) in[i] = 0.01f * i;
  widen(out, in, 64);
  int bad = 0;
  for (int i = 0; i < 4; i++) bad += fabs(dx[i] - exp(x[i])) > 1e-12;
  for (int i = 0; i < 64; i++) bad += fabsf(out[i] - (float)exp((double)in[i])) > 1e-6f;
  bad += fabs(sum4(x) - (exp(0.1) + exp(0.2) + exp(0.3) + exp(0.4))) > 1e-12;
  printf("%d wrong\n", bad);
  return bad != 0;
}
"""


@pytest.mark.parametrize("flags", [["-O2", "-ffast-math"], ["-O2", "-fno-math-errno", "-fveclib=libmvec"]],
                         ids=["ffast-math", "fveclib"])
def test_wider_variants_than_the_target_allows_are_not_called(ws, flags):
    ws.write("wide.c", WIDE)
    ws.eb(*flags, "wide.c", "-o", "wide", "-lm", env={"ENZYME_BUILD_KEEP": ws.file("keep")}, check=True)
    assert ws.exe("wide").stdout == "0 wrong\n"
    symbols = objfile.dynamic_symbols(objfile.read_file(ws.file("wide")))
    assert not [s for s in symbols if s.startswith("_ZGV") and s[4] != "b"], symbols
    ir = ws.read("keep/wide.post-ad.ll")
    calls = set().union(set(), *vector_calls_by_function(ir).values())
    assert all(name.startswith("_ZGVb") for name in calls), calls
    # the kept IR is the repaired module: the 4-wide exp is the intrinsic again (should LLVM
    # stop choosing the AVX2 variant here, this line fails and the repair may go)
    assert re.search(r"call[^\n]*@llvm\.exp\.v4f64\(", ir)


def test_legal_isas_and_the_intrinsics_instead():
    baseline, v3 = "+cmov,+cx8,+fxsr,+mmx,+sse,+sse2,+x87", "+avx,+avx2,+fma,+sse,+sse2"
    assert vecmath.legal_isas([baseline, v3]) == {"b"}
    assert vecmath.legal_isas([v3, ""]) == {"b"}           # a derivative without attributes
    assert vecmath.legal_isas([v3]) == {"b", "c", "d"}
    assert vecmath.legal_isas([]) == {"b"}
    undefined = {"_ZGVbN2v_exp", "_ZGVdN4v_exp", "_ZGVdN8vv_powf", "exp", "_ZGVdN4v_mine"}
    assert vecmath.illegal_calls(undefined, {"b"}) == {"_ZGVdN4v_exp": "llvm.exp.v4f64",
                                                        "_ZGVdN8vv_powf": "llvm.pow.v8f32"}
    assert vecmath.illegal_calls(undefined, {"b", "c", "d"}) == {}
