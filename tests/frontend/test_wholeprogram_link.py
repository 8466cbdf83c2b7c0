"""The whole-program link: input selection, bitcode merge + internalize, codegen, native link."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from enzyme_build import toolchain
from enzyme_build.link import objfile, wholeprogram

# a global named __enzyme_* routes a link through the whole-program path without needing AD
PROBE = "int __enzyme_probe;\n"

MAIN = PROBE + """#include <stdio.h>
double scale(double);
extern int counter;
int main(void) { double s = scale(2.5); printf("%.1f %d\\n", s, counter); return 0; }
"""
SCALE = "int counter = 7;\nstatic double half(double x) { return x / 2; }\n" \
        "double scale(double x) { counter++; return 4 * half(x); }\n"


def test_parse_trace_lines():
    text = "/lib/crt1.o\nmain.o\n./libx.a(g.o)\n(./liby.a)h.o\n/usr/lib/libc.so.6\nld.lld: warning: w\n"
    assert wholeprogram.parse_trace(text) == [
        ("/lib/crt1.o", None), ("main.o", None), ("./libx.a", "g.o"), ("./liby.a", "h.o"),
        ("/usr/lib/libc.so.6", None)]


def test_post_ad_levels():
    assert wholeprogram.post_ad_levels(None) == (3, 0)
    assert wholeprogram.post_ad_levels("0") == (2, 0)
    assert wholeprogram.post_ad_levels("3") == (3, 0)
    assert wholeprogram.post_ad_levels("s") == (2, 1)
    assert wholeprogram.plain_levels(None) == (2, 0)
    assert wholeprogram.plain_levels("0") == (0, 0)
    assert wholeprogram.plain_levels("2") == (2, 0)


def test_link_pipeline_functions_directly(ws):
    """Trial link -> selection -> merged, internalized module -> object -> native link."""
    ws.write("main.c", MAIN)
    ws.write("scale.c", SCALE)
    ws.write("unused.c", "double never_called(double x) { return x; }\n")
    ws.eb("-O2", "-c", "main.c", "scale.c", "unused.c", check=True)
    ws.run(["ar", "rcs", "libs.a", "scale.o", "unused.o"], check=True)
    plan = wholeprogram.LinkPlan(driver=toolchain.clang_command(), output=ws.file("prog"),
                                 link_args=[ws.file("main.o"), ws.file("libs.a")],
                                 tmpdir=ws.path, opt_level="2")
    trace = wholeprogram.trial_link(plan)
    sel = wholeprogram.select_inputs(trace)
    assert [label.rsplit("/", 1)[-1] for label, _ in sel.bitcode] == ["main.o", "libs.a(scale.o)"]
    module = wholeprogram.build_module(sel, shared=False, export_dynamic=False, name="prog")
    from enzyme_build import llvm
    linkage = {name: link for name, _kind, link in llvm.defined_symbols(module)}
    assert linkage["main"] == "external" and linkage["__enzyme_probe"] == "external"
    assert linkage["scale"] == "internal" and linkage["counter"] == "internal"
    assert "never_called" not in linkage
    obj = wholeprogram.compile_whole_program(sel, plan)
    assert objfile.undefined_symbols(objfile.read_file(obj)) >= {"printf"}
    args = wholeprogram.final_link_args(plan, sel, obj)
    # main.o is absorbed; the archive stays behind the program object for what is left
    assert args == [obj, ws.file("libs.a")]
    assert wholeprogram.native_link(plan, args) == 0
    assert ws.exe("prog").stdout == "5.0 8\n"


def test_link_whole_program_entry_point(ws):
    ws.write("main.c", MAIN)
    ws.write("scale.c", SCALE)
    ws.eb("-c", "main.c", "scale.c", check=True)
    plan = wholeprogram.LinkPlan(driver=toolchain.clang_command(), output=ws.file("p2"),
                                 link_args=[ws.file("main.o"), ws.file("scale.o")],
                                 tmpdir=ws.path, keep_dir=ws.file("keep"))
    assert wholeprogram.link_whole_program(plan) == 0
    assert ws.exe("p2").stdout == "5.0 8\n"
    assert sorted(os.listdir(ws.file("keep"))) == ["p2.post-ad.bc", "p2.post-ad.ll",
                                                   "p2.pre-ad.bc", "p2.pre-ad.ll"]


def test_native_objects_keep_what_they_reference_visible(ws):
    """A gcc-compiled object (no bitcode) calls into the bitcode: that symbol stays global."""
    ws.write("native.c", "double scale(double);\ndouble via_native(double x) { return scale(x); }\n")
    ws.run(["cc", "-O2", "-c", "native.c", "-o", "native.o"], check=True)
    ws.write("main.c", PROBE + '#include <stdio.h>\ndouble via_native(double);\n'
             'int main(void) { printf("%.1f\\n", via_native(1.0)); return 0; }\n')
    ws.write("scale.c", SCALE)
    ws.eb("-O2", "main.c", "scale.c", "native.o", "-o", "prog", check=True,
          env={"ENZYME_BUILD_KEEP": "keep"})
    assert ws.exe("prog").stdout == "2.0\n"
    assert "define dso_local double @scale(" in ws.read("keep/prog.pre-ad.ll")


def test_shared_library_exports_only_default_visibility(ws):
    ws.write("lib.c", PROBE + SCALE + '__attribute__((visibility("hidden"))) int secret(void)'
             ' { return 3; }\nint api(void) { return secret() + counter; }\n')
    ws.eb("-O2", "-shared", "-fPIC", "lib.c", "-o", "libscale.so", check=True,
          env={"ENZYME_BUILD_KEEP": "keep"})
    assert os.path.exists(ws.file("keep/libscale.so.pre-ad.ll"))
    exported = ws.run(["nm", "-D", "--defined-only", "libscale.so"], check=True).stdout
    assert " T scale" in exported and " T api" in exported and "secret" not in exported
    ws.write("use.c", '#include <stdio.h>\ndouble scale(double); int api(void);\n'
             'int main(void) { double s = scale(3); printf("%.1f %d\\n", s, api()); return 0; }\n')
    ws.run(["cc", "use.c", "-L.", "-lscale", f"-Wl,-rpath,{ws.path}", "-o", "use"], check=True)
    assert ws.exe("use").stdout == "6.0 11\n"


def test_cxx_templates_and_inline_functions(ws):
    ws.write("t.cc", PROBE.replace("int __enzyme_probe;", 'extern "C" { int __enzyme_probe; }') + """
#include <vector>
#include <numeric>
#include <cstdio>
template <class T> T total(const std::vector<T>& v) { return std::accumulate(v.begin(), v.end(), T()); }
int main() { std::vector<double> v{1.5, 2.5, 3.0}; std::printf("%g\\n", total(v)); return 0; }
""")
    ws.eb("-O0", "-g", "t.cc", "-o", "prog", cxx=True, check=True,
          env={"ENZYME_BUILD_KEEP": "keep"})
    assert ws.exe("prog").stdout == "7\n"
    assert "optnone" not in ws.read("keep/prog.pre-ad.ll")  # -O0 bitcode stays optimizable


def test_export_dynamic_keeps_definitions(ws):
    ws.write("main.c", MAIN)
    ws.write("scale.c", SCALE)
    ws.eb("-O2", "-rdynamic", "main.c", "scale.c", "-o", "prog", check=True)
    assert ws.exe("prog").stdout == "5.0 8\n"
    dynamic = ws.run(["nm", "-D", "--defined-only", "prog"], check=True).stdout
    assert " scale\n" in dynamic


def test_verbose_prints_each_subcommand(ws):
    ws.write("main.c", MAIN)
    ws.write("scale.c", SCALE)
    proc = ws.eb("main.c", "scale.c", "-o", "prog", env={"ENZYME_BUILD_VERBOSE": "1"},
                 check=True)
    lines = [l for l in proc.stderr.splitlines() if l.startswith("enzyme-build: ")]
    # two compiles, the trial link, the final link, the timing line (no AD: no slowest steps)
    assert len(lines) == 5
    assert "--trace" in lines[2] and "whole-program.o" in lines[3]
    assert lines[4].startswith("enzyme-build: linked prog in ")
    assert subprocess.run([ws.file("prog")], capture_output=True).returncode == 0


def test_shared_library_calls_back_into_the_executable(ws):
    """Plain linking exports what a linked .so references; internalizing must not hide it."""
    ws.write("cb.c", "int callback(int);\nint run_callback(int x) { return callback(x) + 1; }\n")
    ws.run(["cc", "-shared", "-fPIC", "cb.c", "-o", "libcb.so"], check=True)
    ws.write("main.c", PROBE + "#include <stdio.h>\nint run_callback(int);\n"
             "int callback(int x) { return 10 * x; }\n"
             'int main(void) { printf("%d\\n", run_callback(4)); return 0; }\n')
    ws.eb("-O2", "main.c", "-L.", "-lcb", f"-Wl,-rpath,{ws.path}", "-o", "prog", check=True)
    assert ws.exe("prog").stdout == "41\n"


def test_symbols_named_on_the_command_line_stay_visible():
    plan = wholeprogram.LinkPlan(driver=[], output="p", link_args=[
        "-Wl,-e,start_here", "-u", "keep_a", "-Wl,--undefined=keep_b", "-Xlinker", "-ukeep_c",
        "-Wl,--export-dynamic", "-emit-llvm"])
    assert plan.command_line.named_symbols() == {"start_here", "keep_a", "keep_b", "keep_c"}


def test_custom_entry_point_without_startfiles(ws):
    ws.write("start.c", PROBE + """#include <unistd.h>
#include <sys/syscall.h>
void my_entry(void) { syscall(SYS_exit, 7); }
""")
    ws.eb("-O2", "-nostartfiles", "-Wl,-e,my_entry", "start.c", "-o", "prog", check=True)
    assert subprocess.run([ws.file("prog")]).returncode == 7


def test_relocatable_link_then_whole_program(ws):
    """`-r` merges fat objects natively (their bitcode sections concatenate); the final link
    still finds every module in the merged section."""
    ws.write("main.c", MAIN)
    ws.write("scale.c", SCALE)
    ws.write("extra.c", "int extra_unused(void) { return 1; }\n")
    ws.eb("-O2", "-c", "main.c", "scale.c", "extra.c", check=True)
    ws.eb("-r", "main.o", "scale.o", "extra.o", "-o", "merged.o", check=True)
    with open(ws.file("merged.o"), "rb") as fh:
        section = objfile.embedded_bitcode(fh.read())
    assert len(objfile.split_bitcode_modules(section)) == 3
    ws.eb("merged.o", "-o", "prog", env={"ENZYME_BUILD_KEEP": "keep"}, check=True)
    assert ws.exe("prog").stdout == "5.0 8\n"
    assert "define internal double @scale(" in ws.read("keep/prog.pre-ad.ll")


def test_cxx_inline_statics_constructors_and_exceptions_across_tus(ws):
    """linkonce_odr functions (one shared static), global constructors and exceptions survive
    the bitcode merge and internalization."""
    inline = "inline int shared_inline(int x) { static int calls = 0; return x + (++calls); }\n"
    ws.write("c1.cc", inline + """#include <stdexcept>
#include <cstdio>
struct Init { Init() { std::puts("ctor"); } } init_obj;
int from_c2(int x);
extern "C" { int __enzyme_probe; }
int main() {
  try { if (from_c2(1) > 0) throw std::runtime_error("boom"); }
  catch (const std::exception& e) { std::printf("caught %s %d\\n", e.what(), shared_inline(10)); }
  return 0;
}
""")
    ws.write("c2.cc", inline + "int from_c2(int x) { return shared_inline(x); }\n")
    ws.eb("-O2", "c1.cc", "c2.cc", "-o", "prog", cxx=True, check=True,
          env={"ENZYME_BUILD_KEEP": "keep"})
    assert ws.exe("prog").stdout == "ctor\ncaught boom 12\n"
    assert "llvm.global_ctors" in ws.read("keep/prog.pre-ad.ll")


def test_marker_globals_get_definitions_only_for_the_abi_names(ws):
    """Markers referenced outside any AD call still link; other enzyme_* names are not faked."""
    ws.write("m.c", PROBE + "#include <stdio.h>\n#include <enzyme/enzyme.h>\n"
             'int main(void) { printf("%d\\n", enzyme_dup + enzyme_const); return 0; }\n')
    ws.eb("-O1", "m.c", "-o", "prog", check=True)
    assert ws.exe("prog").stdout == "0\n"
    ws.write("n.c", PROBE + "extern int enzyme_config;\nint main(void) { return enzyme_config; }\n")
    proc = ws.eb("n.c", "-o", "prog2")
    assert proc.returncode != 0 and "enzyme_config" in proc.stderr


def test_reference_only_the_unoptimized_bitcode_makes(ws):
    """The optimized native code drops `if (debug) dump();`, so the trial link does not load
    dump.o; the (unoptimized, -O0 link) bitcode still calls dump: the archive must stay."""
    ws.write("g.c", "int g(int x) { return x + 1; }\n")
    ws.write("dump.c", "void debug_dump(void) {}\n")
    ws.write("main.c", PROBE + "#include <stdio.h>\nstatic int debug = 0;\n"
             "int g(int); void debug_dump(void);\n"
             'int main(void) { if (debug) debug_dump(); printf("%d\\n", g(1)); return 0; }\n')
    ws.eb("-O2", "-c", "g.c", "dump.c", "main.c", check=True)
    ws.run(["ar", "rcs", "libq.a", "g.o", "dump.o"], check=True)
    ws.eb("main.o", "-L.", "-lq", "-o", "prog", check=True)
    assert ws.exe("prog").stdout == "2\n"


def test_program_linked_from_libraries_only(ws):
    """`cc -o prog -L. -lprog`: no object on the command line, main (and the AD call) sit in
    the archive; the C runtime's reference to main pulls it in, so the link still differentiates."""
    ws.write("prog.c", "#include <stdio.h>\ndouble __enzyme_autodiff(void *, ...);\n"
             "static double sq(double x) { return x * x * x; }\n"
             'int main(void) { printf("%g\\n", __enzyme_autodiff((void *)sq, 2.0)); return 0; }\n')
    ws.eb("-O2", "-c", "prog.c", check=True)
    ws.run(["ar", "rcs", "libprog.a", "prog.o"], check=True)
    ws.eb("-O2", "-L.", "-lprog", "-o", "prog", check=True)
    assert ws.exe("prog").stdout == "12\n"
    # libraries only and no main anywhere: the linker's own error, as with clang
    bad = ws.eb("-O2", "-lm", "-o", "nomain")
    assert bad.returncode != 0 and "main" in bad.stderr and not ws.exists("nomain")


STATIC_RULE_LIB = """double __enzyme_autodiff(void *, ...);
__attribute__((noinline)) static double helper(double x) { return SCALE * x * x; }
typedef struct { void *tape; double primal; } aug_t;
static aug_t helper_aug(double x) { aug_t r = {0, helper(x)}; return r; }
static double helper_grad(double x, double d, void *t) { (void)t; return 20.0 * x * d; }
void *__enzyme_register_gradient_helper[] = {(void *)helper, (void *)helper_aug, (void *)helper_grad};
double f_NAME(double x) { return helper(x) + x; }
double grad_NAME(double x) { return __enzyme_autodiff((void *)f_NAME, x); }
"""


def test_static_functions_with_registrations_stay_private(ws):
    """A registered static helper (and its static rules) keeps internal linkage in the output:
    no clash with a plain object's global `helper`, no export from a shared library that would
    make another library's f call this library's helper."""
    ws.write("p1.c", STATIC_RULE_LIB.replace("SCALE", "2.0").replace("NAME", "a") +
             '#include <stdio.h>\ndouble other(double);\n'
             'int main(void) { printf("%g %g\\n", grad_a(1.0), other(1.0)); return 0; }\n')
    ws.write("p2.c", "double helper(double x) { return 5.0 * x; }\ndouble other(double x) { return helper(x); }\n")
    ws.run(["cc", "-O2", "-c", "p2.c", "-o", "p2.o"], check=True)
    ws.eb("-O2", "p1.c", "p2.o", "-o", "p1", check=True)
    assert ws.exe("p1").stdout == "21 5\n"
    for lib, scale in (("a", "2.0"), ("b", "3.0")):
        ws.write(f"lib{lib}.c", STATIC_RULE_LIB.replace("SCALE", scale).replace("NAME", lib))
        ws.eb("-O2", "-shared", "-fPIC", f"lib{lib}.c", "-o", f"lib{lib}.so", check=True)
        exported = ws.run(["nm", "-D", "--defined-only", f"lib{lib}.so"], check=True).stdout
        assert "helper" not in exported.replace("__enzyme_register_gradient_helper", "")
    ws.write("main.c", '#include <stdio.h>\ndouble f_a(double), f_b(double), grad_a(double), grad_b(double);\n'
             'int main(void) { printf("%g %g %g %g\\n", f_a(1), f_b(1), grad_a(1), grad_b(1)); return 0; }\n')
    ws.run(["cc", "main.c", "-L.", "-la", "-lb", "-Wl,-rpath,$ORIGIN", "-o", "main"], check=True)
    assert ws.exe("main").stdout == "3 4 21 21\n"


LTO_A = "#include <math.h>\nstatic double state;\ndouble fa(double x) { state = sin(x); return state * x; }\n"
LTO_B = "static double state;\ndouble fb(double x) { state = x * x; return state * 3.0; }\n"
LTO_MAIN = """#include <stdio.h>
double __enzyme_fwddiff(void *, ...);
double __enzyme_autodiff(void *, ...);
double fa(double), fb(double);
double both(double x) { return fa(x) + fb(x); }
int main(void) { printf("%.6f %.6f\\n", __enzyme_fwddiff((void *)both, 0.5, 1.0), __enzyme_autodiff((void *)both, 0.5));
  return 0; }
"""


def test_lto_objects_are_read_as_bitcode(ws):
    """-flto / -flto=thin: -c leaves clang's LTO bitcode objects; the link reads them as the
    program's bitcode (also from an archive); a one-shot build compiles fat objects."""
    ws.write("a.c", LTO_A)
    ws.write("b.c", LTO_B)
    ws.write("main.c", LTO_MAIN)
    want = "3.918217 3.918217\n"
    for flag in ("-flto", "-flto=thin"):
        ws.eb("-O2", flag, "-c", "a.c", "b.c", "main.c", check=True)
        with open(ws.file("a.o"), "rb") as fh:
            assert fh.read(4) == b"BC\xc0\xde"
        ws.eb("-O2", flag, "a.o", "b.o", "main.o", "-o", "p1", "-lm", check=True)
        assert ws.exe("p1").stdout == want
        ws.run(["ar", "rcs", "libab.a", "a.o", "b.o"], check=True)
        ws.eb("-O2", flag, "main.o", "-L.", "-lab", "-o", "p2", "-lm", check=True)
        assert ws.exe("p2").stdout == want
        ws.eb("-O2", flag, "a.c", "b.c", "main.c", "-o", "p3", "-lm", check=True)
        assert ws.exe("p3").stdout == want


_HEAP_PROBE = r"""
import sys
from enzyme_build.link.wholeprogram import return_large_blocks
def rss():
    return int(open("/proc/self/status").read().split("VmRSS:")[1].split()[0]) // 1024
if sys.argv[1] == "on":
    return_large_blocks()
big = bytearray(20 << 20); big[::4096] = b"x" * len(big[::4096]); del big   # one whole-module text
base = rss()
blocks = [bytearray(3 << 19) for _ in range(20)]    # later texts, 1.5 MB each
for b in blocks:
    b[::4096] = b"x" * len(b[::4096])
del blocks, b
print(rss() - base)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator")
def test_freed_large_blocks_leave_the_process():
    """return_large_blocks (the link sets it before the AD stage): after a large block was
    freed, blocks of a few MB freed later go back to the system instead of staying resident
    in the heap, as glibc's raised threshold would keep them."""
    kept = {}
    for mode in ("off", "on"):
        out = subprocess.run([sys.executable, "-c", _HEAP_PROBE, mode], capture_output=True, text=True,
                             check=True).stdout
        kept[mode] = int(out.strip())
    assert kept["on"] < 8, kept
    assert kept["off"] > 20, kept   # the behaviour the setting changes (else the test proves nothing)


def test_objects_compiled_into_the_commands_temp_directory_skip_the_probe(tmp_path):
    """`_compiled_here`: an object (or the k-th module of its section) in the link's own
    temporary directory is the command's own compile; anything else is checked first."""
    own = tmp_path / "enzyme-build-x"
    own.mkdir()
    (own / "0-a.o").write_bytes(b"")
    (tmp_path / "user.o").write_bytes(b"")
    assert wholeprogram._compiled_here(str(own / "0-a.o"), str(own))
    assert wholeprogram._compiled_here(str(own / "0-a.o") + "#1", str(own))
    assert not wholeprogram._compiled_here(str(tmp_path / "user.o"), str(own))
    assert not wholeprogram._compiled_here(str(tmp_path / "user.o") + "#0", str(own))
    assert not wholeprogram._compiled_here(str(own / "0-a.o"), None)
    assert not wholeprogram._compiled_here("#1", str(own))

