"""-shared outputs: what stays exported when enzyme-build links a differentiated library.

Internalization follows the same rules as the linker's dynamic symbol table: default
visibility, minus what `-Wl,--version-script` makes local and what `-Wl,--exclude-libs`
hides. A helper hidden that way is internalized (here: inlined and gone from the output),
and the library still gives the right gradient when a program loads it."""
from __future__ import annotations


import pytest

from enzyme_build.errors import EnzymeBuildError
from enzyme_build.link.wholeprogram import ExportRules, parse_version_script

LIB = """
double helper(double x) { return x * x * x; }
double __enzyme_autodiff(void *, ...);
double model(double x) { return helper(x) + 2 * x; }
double grad_model(double x) { return __enzyme_autodiff((void *)model, x); }
"""

# a solver taking a callback, differentiated through the callback
SOLVER_LIB = """
typedef double (*fn)(double, void *);
double integrand(double x, void *p) { return *(double *)p * x * x; }
double solve(fn f, double a, void *p) {
  double s = 0;
  for (int i = 1; i <= 10; i++) s += f(a * i / 10.0, p);
  return s / 10;
}
double __enzyme_autodiff(void *, ...);
extern int enzyme_const;
static double objective(double a, double c) { return solve(integrand, a, &c); }
double grad_objective(double a, double c) { return __enzyme_autodiff((void *)objective, a, enzyme_const, c); }
"""

UTIL = """
double util_cube(double x) { return x * x * x; }
double util_spare(double x) { return x + 1; }
"""
USES_UTIL = """
double util_cube(double x);
double __enzyme_autodiff(void *, ...);
double model(double x) { return util_cube(x) + 2 * x; }
double grad_model(double x) { return __enzyme_autodiff((void *)model, x); }
"""

LOADER = r"""
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv) {
  void *h = dlopen(argv[1], RTLD_NOW);
  if (!h) { printf("dlopen: %s\n", dlerror()); return 1; }
  double (*g)(double) = (double (*)(double))dlsym(h, argv[2]);
  if (!g) { printf("no %s\n", argv[2]); return 1; }
  printf("%.12g\n", g(1.5));
  for (int k = 3; k < argc; k++) printf("%s:%s\n", argv[k], dlsym(h, argv[k]) ? "found" : "absent");
  return 0;
}
"""

LINKED = r"""
#include <stdio.h>
double grad_objective(double a, double c);
int main(void) { printf("%.12g\n", grad_objective(2.0, 3.0)); return 0; }
"""


def nm(ws, path, *flags):
    proc = ws.run(["llvm-nm", *flags, path], check=True)
    return {line.split()[-1].split("@")[0]: line.split()[-2] for line in proc.stdout.splitlines()
            if len(line.split()) >= 2}


def dynamic_symbols(ws, path):
    proc = ws.run(["readelf", "--dyn-syms", "-W", path], check=True)
    out = set()
    for line in proc.stdout.splitlines():
        cols = line.split()
        if len(cols) >= 8 and cols[6] not in ("UND", "ABS") and cols[4] in ("GLOBAL", "WEAK"):
            out.add(cols[7].split("@")[0])
    return out


def loader(ws):
    ws.write("loader.c", LOADER)
    ws.eb("-O2", "loader.c", "-o", "loader", "-ldl", check=True)


def load(ws, lib, symbol, *probe):
    return ws.run([ws.file("loader"), ws.file(lib), symbol, *probe], check=True).stdout.split()


def test_version_script_hides_helper(ws):
    ws.write("lib.c", LIB)
    ws.write("lib.map", "LIB_1 {\n  global: grad_model; mod*;  /* wildcard */\n  local: *;\n};\n")
    ws.eb("-O2", "-fPIC", "-shared", "lib.c", "-o", "libm1.so", "-Wl,--version-script=lib.map", check=True)
    assert dynamic_symbols(ws, ws.file("libm1.so")) == {"grad_model", "model"}
    assert "helper" not in nm(ws, ws.file("libm1.so"))      # internalized, inlined, gone
    loader(ws)
    assert load(ws, "libm1.so", "grad_model", "helper", "model") == ["8.75", "helper:absent", "model:found"]


def test_without_version_script_helper_stays_exported(ws):
    ws.write("lib.c", LIB)
    ws.eb("-O2", "-fPIC", "-shared", "lib.c", "-o", "libm2.so", check=True)
    assert {"grad_model", "model", "helper"} <= dynamic_symbols(ws, ws.file("libm2.so"))
    loader(ws)
    assert load(ws, "libm2.so", "grad_model", "helper") == ["8.75", "helper:found"]


def test_visibility_hidden_helper(ws):
    ws.write("lib.c", LIB.replace("double helper", '__attribute__((visibility("hidden"))) double helper'))
    ws.eb("-O2", "-fPIC", "-shared", "lib.c", "-o", "libm3.so", check=True)
    assert "helper" not in dynamic_symbols(ws, ws.file("libm3.so"))
    assert "helper" not in nm(ws, ws.file("libm3.so"))


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_callback_solver_with_version_script(ws, opt):
    """A library exporting a solver that takes a callback, differentiated through the
    callback; the version script keeps the solver and the gradient, hides the integrand."""
    ws.write("solver.c", SOLVER_LIB)
    ws.write("solver.map", "{ global: solve; grad_objective; local: *; };\n")
    ws.eb(opt, "-fPIC", "-shared", "solver.c", "-o", "libsolver.so", "-Wl,--version-script,solver.map",
          check=True)
    assert dynamic_symbols(ws, ws.file("libsolver.so")) == {"solve", "grad_objective"}
    ws.write("main.c", LINKED)
    ws.eb("-O2", "main.c", "-L.", "-lsolver", "-Wl,-rpath,$ORIGIN", "-o", "prog", check=True)
    # d/da mean_i c (a i/10)^2 = 2 a c sum i^2 / 1000 = 2*2*3*385/1000
    assert abs(float(ws.exe("prog").stdout) - 4.62) < 1e-12


@pytest.mark.parametrize("flag", ["-Wl,--exclude-libs,ALL", "-Wl,--exclude-libs,libutil.a",
                                  "-Wl,--exclude-libs=libother.a:libutil.a"])
def test_exclude_libs_fat_archive(ws, flag):
    ws.write("util.c", UTIL)
    ws.eb("-O2", "-fPIC", "-c", "util.c", "-o", "util.o", check=True)
    ws.run(["ar", "rcs", "libutil.a", "util.o"], check=True)
    ws.write("lib.c", USES_UTIL)
    ws.eb("-O2", "-fPIC", "-shared", "lib.c", "-L.", "-lutil", "-o", "libx.so", flag, check=True)
    assert dynamic_symbols(ws, ws.file("libx.so")) == {"grad_model", "model"}
    symtab = nm(ws, ws.file("libx.so"))
    assert "util_cube" not in symtab and "util_spare" not in symtab   # internalized
    loader(ws)
    assert load(ws, "libx.so", "grad_model", "util_cube") == ["8.75", "util_cube:absent"]


def test_exclude_libs_other_archive_keeps_exports(ws):
    ws.write("util.c", UTIL)
    ws.eb("-O2", "-fPIC", "-c", "util.c", "-o", "util.o", check=True)
    ws.run(["ar", "rcs", "libutil.a", "util.o"], check=True)
    ws.write("lib.c", USES_UTIL)
    ws.eb("-O2", "-fPIC", "-shared", "lib.c", "-L.", "-lutil", "-o", "liby.so", "-Wl,--exclude-libs,libz.a",
          check=True)
    assert {"util_cube", "util_spare", "grad_model"} <= dynamic_symbols(ws, ws.file("liby.so"))


def test_cxx_extern_block(ws):
    ws.write("lib.cc", """
namespace ns {
double helper(double x) { return x * x * x; }
double model(double x) { return helper(x) + 2 * x; }
}
extern "C" double __enzyme_autodiff(void *, ...);
extern "C" double grad_model(double x) { return __enzyme_autodiff((void *)ns::model, x); }
""")
    ws.write("lib.map", 'V { global: grad_model; extern "C++" { "ns::model(double)"; }; local: *; };\n')
    ws.eb("-O2", "-fPIC", "-shared", "lib.cc", "-o", "libcx.so", "-Wl,--version-script=lib.map",
          check=True, cxx=True)
    dyn = dynamic_symbols(ws, ws.file("libcx.so"))
    assert dyn == {"grad_model", "_ZN2ns5modelEd"}
    assert "_ZN2ns6helperEd" not in nm(ws, ws.file("libcx.so"))
    loader(ws)
    assert load(ws, "libcx.so", "grad_model") == ["8.75"]


def test_bad_version_script_is_one_clear_error(ws):
    ws.write("lib.c", LIB)
    ws.write("bad.map", "{ global: grad_model;\n")
    proc = ws.eb("-O2", "-fPIC", "-shared", "lib.c", "-o", "libbad.so", "-Wl,--version-script=bad.map")
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "bad.map" in proc.stderr
    proc = ws.eb("-O2", "-fPIC", "-shared", "lib.c", "-o", "libbad.so", "-Wl,--version-script=missing.map")
    assert proc.returncode != 0 and "Traceback" not in proc.stderr and "missing.map" in proc.stderr


def test_version_script_ranking(tmp_path):
    """Exact names before wildcards before a bare `*`, as GNU ld ranks them."""
    path = tmp_path / "v.map"
    path.write_text('# comment\nA { global: api_*; keep_me; local: api_internal; *; };\n'
                    'B { local: api_x?; } A;\n')
    rules = ExportRules([(str(path), parse_version_script(str(path)))])
    names = ["api_run", "api_internal", "keep_me", "other", "api_x1"]
    # api_x1: both `api_*` (global) and `api_x?` (local) are wildcards: the first wins
    assert rules.filter(names) == ["api_run", "keep_me", "api_x1"]
    path.write_text("{ global: x; ")
    with pytest.raises(EnzymeBuildError, match="missing '}'"):
        parse_version_script(str(path))


def test_cmdline_model_questions():
    from enzyme_build import cmdline
    cl = cmdline.parse(["-shared", "a.o", "-Wl,--version-script=x.map", "-Wl,--exclude-libs,ALL",
                        "-Xlinker", "--exclude-libs", "-Xlinker", "liba.a:libb.a",
                        "-Wl,--version-script,y.map"])
    assert cl.version_scripts() == ["x.map", "y.map"]
    assert cl.excluded_libraries() == ["ALL", "liba.a", "libb.a"]
