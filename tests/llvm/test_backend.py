"""The link's back end (enzyme_build/llvm/backend.py): the pipeline it runs, parallel code
generation of a partitioned module, its temporary files and its errors."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from enzyme_build import llvm
from enzyme_build.errors import EnzymeBuildError
from enzyme_build.llvm import backend

CLANG = shutil.which("clang-22") or "/usr/lib/llvm-22/bin/clang"
needs_tools = pytest.mark.skipif(
    not (backend.external_tools_enabled() and backend._can_split()),
    reason="opt/llc/llvm-split/llvm-nm of LLVM 22 not installed")

# Two internal functions named like a global of another object in the link (`helper`,
# `table`), C++ inline functions and a template (linkonce_odr), external functions and
# enough of them that every partition gets some.
PROGRAM = r"""
#include <cstdio>
static double helper(double x) { return x * 3.0 + 1.0; }
static const double table[4] = {1.5, 2.5, 3.5, 4.5};
inline double twice(double x) { return 2.0 * x; }
template <int K> double scaled(double x) { return K * x + table[K % 4]; }
extern "C" double other_object(double);
static int constructed = 0;
__attribute__((constructor)) static void count_construction() { constructed++; }
struct Counter { Counter() { constructed += 10; } } counter;
""" + "".join(
    f"extern \"C\" double f{k}(double x) {{ return helper(x) + twice(x) + scaled<{k}>(x) + {k}; }}\n"
    for k in range(24)) + r"""
int main() {
  double s = 0;
""" + "".join(f"  s += f{k}(0.25 * {k});\n" for k in range(24)) + r"""
  std::printf("%.6f %.6f %d\n", s, other_object(2.0), constructed);
  return 0;
}
"""

# A separate (native) object with globals named like the module's internal symbols.
OTHER = r"""
double helper(double x) { return -x; }
const double table[4] = {-1, -1, -1, -1};
double other_object(double x) { return helper(x) + table[0]; }
"""


def _bitcode(tmp_path, source: str, name: str, *, cxx: bool) -> str:
    src = tmp_path / (name + (".cc" if cxx else ".c"))
    src.write_text(source)
    out = tmp_path / (name + ".bc")
    subprocess.run([CLANG, "-x", "c++" if cxx else "c", "-O0", "-Xclang", "-disable-O0-optnone",
                    "-fPIC", "-emit-llvm", "-c", str(src), "-o", str(out)], check=True)
    return str(out)


def _link_and_run(tmp_path, program_object: str, tag: str) -> str:
    other = tmp_path / "other.c"
    other.write_text(OTHER)
    subprocess.run([CLANG, "-c", str(other), "-o", str(tmp_path / "other.o")], check=True)
    exe = tmp_path / f"prog-{tag}"
    subprocess.run([CLANG, "--driver-mode=g++", program_object, str(tmp_path / "other.o"), "-o", str(exe)],
                   check=True)
    return subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout


def test_pipeline_text_names_the_default_pipelines():
    """-O2/-O3: the default pipeline, then its loop vectorizer once more; -O1, -Os, -Oz:
    the default pipeline alone."""
    for level in (2, 3):
        text = backend.pipeline_text(level)
        assert text.startswith(f"default<O{level}>,function<eager-inv>(loop-vectorize<"), text
        assert text.count("loop-vectorize<") == 1
    assert backend.pipeline_text(1) == "default<O1>"
    assert backend.pipeline_text(2, 1) == "default<Os>"
    assert backend.pipeline_text(2, 2) == "default<Oz>"


@needs_tools
def test_late_vectorizer_parses_and_runs_after_the_default_pipeline():
    """opt accepts the text, and its pipeline holds the loop vectorizer twice, the second
    after the first loop-load-elim (what it is there for)."""
    proc = subprocess.run([backend.find_tool("opt"), f"-passes={backend.pipeline_text(3)}",
                           "-print-pipeline-passes", "-disable-output", "/dev/null"],
                          capture_output=True, text=True, check=True)
    passes = proc.stdout.replace("(", ",").replace(")", ",").split(",")
    vectorize = [k for k, p in enumerate(passes) if p.startswith("loop-vectorize<")]
    assert len(vectorize) == 2, proc.stdout
    assert vectorize[0] < passes.index("loop-load-elim") < vectorize[1]


@needs_tools
def test_pipeline_is_the_per_module_default_with_vectorizers():
    """The text we hand opt builds LLVM's O3 module pipeline: inliner, SROA, GVN, both
    vectorizers, unrolling (what llvmlite's buildPerModuleDefaultPipeline(O3) builds)."""
    proc = subprocess.run([backend.find_tool("opt"), f"-passes={backend.pipeline_text(3)}",
                           "-print-pipeline-passes", "-disable-output", "/dev/null"],
                          capture_output=True, text=True, check=True)
    text = proc.stdout
    for piece in ("inline", "sroa", "gvn", "instcombine", "loop-vectorize", "slp-vectorizer",
                  "loop-unroll<O3>", "globaldce"):
        assert piece in text, piece


# two products stored side by side: the SLP vectorizer models a gain of 1 for packing them
# (`Stores SLP vectorized with cost -1`), and of 2 once each gets a sum as well
SLP_PAIR = """
target triple = "x86_64-pc-linux-gnu"
define void @pair(ptr %p, double %a, double %b, double %c, double %d, double %e, double %f) noinline {
  %m0 = fmul double %a, %b
  %m1 = fmul double %c, %d
SUMS  %q = getelementptr inbounds double, ptr %p, i64 1
  store double %s0, ptr %p, align 8
  store double %s1, ptr %q, align 8
  ret void
}
"""
PRODUCTS = "  %s0 = bitcast double %m0 to double\n  %s1 = bitcast double %m1 to double\n"
SUMS = "  %s0 = fadd double %m0, %e\n  %s1 = fadd double %m1, %f\n"


@needs_tools
@pytest.mark.parametrize("body, vectorized", [(PRODUCTS, False), (SUMS, True)])
def test_slp_trees_of_gain_one_stay_scalar(tmp_path, body, vectorized):
    """The post-AD pipeline's SLP threshold (backend.SLP_THRESHOLD): the pair of products
    alone (modelled gain 1) stays scalar, with sums (gain 2) it is vectorized."""
    out = str(tmp_path / "out.bc")
    backend.optimize_to_bitcode(llvm.parse_assembly(SLP_PAIR.replace("SUMS", body)), out, 2,
                                workdir=str(tmp_path))
    assert ("<2 x double>" in llvm.read_bitcode_file(out).text()) == vectorized


SCALAR = """
define internal i32 @add(i32 %a, i32 %b) {
  %s = alloca i32
  %t = add i32 %a, %b
  store i32 %t, ptr %s
  %r = load i32, ptr %s
  ret i32 %r
}
define i32 @five() {
  %r = call i32 @add(i32 2, i32 3)
  ret i32 %r
}
"""


@pytest.mark.parametrize("in_process", [False, True])
def test_optimization_happens_in_both_back_ends(tmp_path, monkeypatch, in_process):
    """Inlining, SROA and constant folding: @five returns 5 and @add is gone, whether the
    pipeline ran in opt or in llvmlite; the input module is consumed, no file is left."""
    if in_process:
        monkeypatch.setenv("ENZYME_BUILD_IN_PROCESS", "1")
    elif not backend.external_tools_enabled():
        pytest.skip("opt/llc of LLVM 22 not installed")
    work = tmp_path / "work"
    work.mkdir()
    out = str(tmp_path / "out.bc")
    backend.optimize_to_bitcode(llvm.parse_assembly(SCALAR), out, 3, workdir=str(work))
    text = llvm.read_bitcode_file(out).text()
    assert "ret i32 5" in text
    assert "@add" not in text
    assert os.listdir(work) == []


@needs_tools
@pytest.mark.parametrize("keep_names", [False, True])
def test_local_names_are_dropped_unless_kept(tmp_path, keep_names):
    """The post-AD pipeline drops local value names (they cost opt and llc memory and time;
    clang drops them too) and keeps them when asked (ENZYME_BUILD_KEEP's post-ad.ll), global
    names either way."""
    work = tmp_path / "work"
    work.mkdir()
    out = str(tmp_path / "out.bc")
    source = """
define double @sq(ptr %p, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %acc = phi double [ 0.0, %entry ], [ %acc.next, %loop ]
  %at = getelementptr double, ptr %p, i64 %i
  %x = load double, ptr %at
  %acc.next = call double @llvm.fmuladd.f64(double %x, double %x, double %acc)
  %i.next = add i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret double %acc.next
}
declare double @llvm.fmuladd.f64(double, double, double)
"""
    backend.optimize_to_bitcode(llvm.parse_assembly(source), out, 2, workdir=str(work), keep_names=keep_names)
    text = llvm.read_bitcode_file(out).text()
    assert "define double @sq(" in text
    assert ("%acc.next" in text) == keep_names, text


@needs_tools
def test_parallel_codegen_links_and_runs_like_serial(tmp_path):
    """Internal, external and linkonce_odr functions spread over three partitions: the
    program prints what the one-object build prints, the internal `helper` and `table` do not
    clash with the other object's globals, and only the output is left in the work dir."""
    bc = _bitcode(tmp_path, PROGRAM, "prog", cxx=True)
    text = llvm.read_bitcode_file(bc).text()
    assert "linkonce_odr" in text and "define internal" in text
    work = tmp_path / "work"
    work.mkdir()
    serial, parallel = str(work / "serial.o"), str(work / "parallel.o")
    assert backend.emit_object_file(bc, serial, jobs=1, workdir=str(work)) == 1
    assert backend.emit_object_file(bc, parallel, jobs=3, workdir=str(work), split_min_bytes=0) == 3
    assert sorted(os.listdir(work)) == ["parallel.o", "serial.o"]
    symbols = subprocess.run(["nm", parallel], capture_output=True, text=True, check=True).stdout
    local = {line.split()[-1] for line in symbols.splitlines() if line.split()[-2:-1] in (["t"], ["r"])}
    assert any("helper" in name for name in local), symbols
    expected = _link_and_run(tmp_path, serial, "serial")
    assert _link_and_run(tmp_path, parallel, "parallel") == expected
    assert expected.split()[1:] == ["-3.000000", "11"]   # the other object's helper; constructors once


@needs_tools
def test_codegen_failure_is_one_message_and_leaves_nothing(tmp_path):
    bad = tmp_path / "bad.bc"
    bad.write_bytes(b"BC\xc0\xde" + b"\0" * 64)
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(EnzymeBuildError) as caught:
        backend.emit_object_file(str(bad), str(work / "out.o"), jobs=2, workdir=str(work),
                                 split_min_bytes=0, name="prog")
    assert caught.value.message.startswith("code generation failed")
    assert "\n" not in caught.value.message
    assert os.listdir(work) == []


@pytest.mark.parametrize("value", ["0", "-2", "many"])
def test_bad_jobs_setting_is_a_user_error(monkeypatch, value):
    monkeypatch.setenv(backend.JOBS_VAR, value)
    with pytest.raises(EnzymeBuildError, match=backend.JOBS_VAR):
        backend.codegen_jobs()


def test_jobs_default_to_the_cpus_we_may_use(monkeypatch):
    monkeypatch.delenv(backend.JOBS_VAR, raising=False)
    assert 1 <= backend.codegen_jobs() <= backend.MAX_JOBS
    monkeypatch.setenv(backend.JOBS_VAR, "3")
    assert backend.codegen_jobs() == 3


@needs_tools
def test_one_dominant_function_is_compiled_whole(tmp_path):
    """A partition holding most of the code would only add the split's cost: the module is
    compiled as one object (what the post-AD inliner makes of a program whose pieces are all
    inlined into one gradient)."""
    body = "".join(f"  %v{k + 1} = fadd double %v{k}, 1.0\n" for k in range(3000))
    small = "".join(f"define i32 @small{k}() {{\n  ret i32 {k}\n}}\n" for k in range(4))
    text = f"define double @big(double %v0) {{\n{body}  ret double %v3000\n}}\n" + small
    bc = tmp_path / "m.bc"
    bc.write_bytes(llvm.parse_assembly(text).bitcode())
    work = tmp_path / "work"
    work.mkdir()
    assert backend.emit_object_file(str(bc), str(work / "m.o"), jobs=2, workdir=str(work),
                                    split_min_bytes=0) == 1
    assert os.listdir(work) == ["m.o"]


def test_parse_assembly_takes_utf8_bytes_in_place():
    """The AD stage hands its output over as bytes (no second copy while LLVM parses it):
    the same module as from the str, the same error for bad IR, names beyond ASCII intact."""
    text = ('define double @"f\u00e9"(double %x) {\nentry:\n  %y = fmul double %x, %x\n'
            '  ret double %y\n}\n')
    from_str = llvm.parse_assembly(text, "s")
    from_bytes = llvm.parse_assembly(text.encode("utf-8"), "b")
    assert from_bytes.text().split("\n", 1)[1] == from_str.text().split("\n", 1)[1]
    assert from_bytes.function_names() == ["f\u00e9"]
    llvm.verify(from_bytes)
    data = text.replace("%x, %x", "%x, %z").encode("utf-8")
    with pytest.raises(EnzymeBuildError) as info:
        llvm.parse_assembly(data, "bad")
    assert "%z" in info.value.message and info.value.location == "bad"
