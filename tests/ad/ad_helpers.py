"""Helpers for AD tests: build C through the AD stage directly (no wrapper) and run it."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "acceptance")   # the acceptance programs
CLANG = shutil.which("clang-22") or "/usr/lib/llvm-22/bin/clang"
CLANGXX = shutil.which("clang++-22") or "/usr/lib/llvm-22/bin/clang++"


# IR-level tests of the pre-AD rewrites: one function @g in a module with x86-64's layout
LAYOUT = 'target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"'


def ir_module(*body: str, ret: str = "double", params: str = "ptr %p") -> str:
    """Module text defining `ret @g(params)` whose entry block `bb` holds the body lines."""
    return "\n".join([LAYOUT, "", f"define {ret} @g({params}) {{", "bb:", *body, "}", ""])


def verified(text: str, name: str = "ir") -> str:
    """`text`, after LLVM's parser and verifier accepted it."""
    from enzyme_build import llvm
    llvm.verify(llvm.parse_assembly(text, name), generated=True)
    return text


def _compiler(source: str, cxx: bool | None) -> str:
    """clang++ for C++ (asked for, or by the file's suffix), else clang."""
    return CLANGXX if (cxx if cxx is not None else source.endswith((".cc", ".cpp"))) else CLANG


def frontend_ir(source: str, workdir: str, *, opt: str = "-O2", cxx: bool | None = None, extra=(),
                include=(os.path.join(HERE, "programs"), EXAMPLES)) -> str:
    """Raw frontend IR of a C/C++ file: what fat objects embed."""
    out = os.path.join(workdir, os.path.basename(source) + ".ll")
    cmd = [_compiler(source, cxx), opt, "-Xclang", "-disable-llvm-passes", "-S", "-emit-llvm",
           *[a for d in include for a in ("-I", d)], *extra, source, "-o", out]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    with open(out) as fh:
        return fh.read()


def build_with_stage(source: str, workdir: str, *, opt: str = "-O2", cxx: bool | None = None,
                     ad_before_opt: bool = False, extra=(),
                     include=(os.path.join(HERE, "programs"), EXAMPLES)) -> str:
    """Compile `source` through run_ad_stage + O3 + codegen; returns the executable path."""
    from enzyme_build import llvm
    from enzyme_build.ad.stage import run_ad_stage

    text = frontend_ir(source, workdir, opt=opt, cxx=cxx, extra=extra, include=include)
    module = llvm.parse_assembly(text, os.path.basename(source))
    module = run_ad_stage(module, ad_before_opt=ad_before_opt, keep_dir=os.path.join(workdir, "keep"))
    llvm.optimize(module, 3)
    llvm.verify(module, generated=True)
    obj = os.path.join(workdir, os.path.basename(source) + ".o")
    with open(obj, "wb") as fh:
        fh.write(llvm.emit_object(module, opt=3))
    exe = os.path.join(workdir, os.path.splitext(os.path.basename(source))[0])
    subprocess.run([_compiler(source, cxx), obj, "-o", exe, "-lm"], check=True,
                   capture_output=True, text=True)
    return exe


def function_body(text: str, name: str) -> str:
    """The text of function @name in module text (from its `define` to its closing brace)."""
    m = re.search(rf"^define [^\n]*@{re.escape(name)}\(.*?^}}$", text, re.M | re.S)
    assert m, f"@{name} not defined in:\n{text}"
    return m.group(0)


def vectorized_reverse_loops(text: str) -> list[str]:
    """The reverse-sweep blocks (`rev$...`, wherever the derivative was inlined) whose loop
    LLVM's vectorizer marked as vectorized: the scalar remainder it keeps for the last
    iterations keeps the reverse block's name and gets `llvm.loop.isvectorized`."""
    flags = {m.group(1) for m in re.finditer(r'^(!\d+) = !\{!"llvm\.loop\.isvectorized", i32 1\}', text, re.M)}
    loops = {m.group(1) for m in re.finditer(r"^(!\d+) = distinct !\{([^}]*)\}", text, re.M)
             if set(m.group(2).replace(" ", "").split(",")) & flags}
    out = []
    for m in re.finditer(r'^("?rev\$[^\n:]*"?):.*?(?=^\S|\Z)', text, re.M | re.S):
        loop = re.search(r"!llvm\.loop (!\d+)", m.group(0))
        if loop and loop.group(1) in loops:
            out.append(m.group(1))
    return out


_STRIDE_DEF = re.compile(r"  (%static\.stride\$\d+) = add i64 (\d+), 0\n")


def fold_strides(fn: str) -> str:
    """A derived function's text with each static-record stride value (`%static.stride$N =
    add i64 S, 0`, defined at the top of the function) folded into its uses, as LLVM's
    constant folding does: the IR a test reads then shows `mul i64 %tc$3, 16`."""
    strides = dict(_STRIDE_DEF.findall(fn))
    fn = _STRIDE_DEF.sub("", fn)
    return re.sub(r"%static\.stride\$\d+(?![-\w$.])", lambda m: strides[m.group(0)], fn) if strides else fn


def function_block(fn: str, label: str) -> str:
    """One basic block of a function's text, without its label line."""
    m = re.search(rf"^{re.escape(label)}:\n(.*?)(?=^\S+:$|^}}$)", fn, re.M | re.S)
    assert m, f"no block {label} in:\n{fn}"
    return m.group(1)


def run_program(exe: str) -> subprocess.CompletedProcess:
    return subprocess.run([exe], capture_output=True, text=True, timeout=60)


def enzyme_build_cli() -> str:
    return os.path.join(os.path.dirname(sys.executable), "enzyme-build")


# ------------------------------------------------------------ programs checked against FD
# A C prefix and a `main` that prints, per input x[i], the reverse-mode gradient, the
# forward-mode derivative along e_i and a central difference, for `double f(const double *)`.
FD_HEAD = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <math.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
"""


def fd_main(n: int = 4, x=(0.5, -1.25, 1.5, 0.75), h: float = 1e-6) -> str:
    """`main` printing "rev fwd fd" per input of f at x (central difference with step h)."""
    xs = ", ".join(repr(v) for v in x[:n])
    return rf"""
int main(void) {{
  double x[{n}] = {{{xs}}}, g[{n}] = {{0}};
  __enzyme_autodiff((void *)f, enzyme_dup, x, g);
  for (int i = 0; i < {n}; i++) {{
    double e[{n}] = {{0}}; e[i] = 1;
    double xp[{n}], xm[{n}];
    for (int k = 0; k < {n}; k++) {{ xp[k] = x[k]; xm[k] = x[k]; }}
    xp[i] += {h!r}; xm[i] -= {h!r};
    printf("%.15g %.15g %.15g\n", g[i], __enzyme_fwddiff((void *)f, enzyme_dup, x, e),
           (f(xp) - f(xm)) / {2 * h!r});
  }}
  return 0;
}}
"""


# the same for C++ programs (`double f(const double *x)` over 4 inputs)
CXX_FD_HEAD = r"""
#include <cmath>
#include <cstdio>
#include <utility>
extern int enzyme_dup;
extern "C" void __enzyme_autodiff(void *, ...);
extern "C" double __enzyme_fwddiff(void *, ...);
"""
CXX_FD_MAIN = r"""
int main() {
  double x[4] = {0.5, -1.25, 1.5, 0.75}, g[4] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, g);
  for (int i = 0; i < 4; i++) {
    double e[4] = {0}; e[i] = 1;
    double xp[4], xm[4];
    for (int k = 0; k < 4; k++) { xp[k] = x[k]; xm[k] = x[k]; }
    xp[i] += 1e-6; xm[i] -= 1e-6;
    std::printf("%.15g %.15g %.15g\n", g[i], __enzyme_fwddiff((void *)f, enzyme_dup, x, e), (f(xp) - f(xm)) / 2e-6);
  }
}
"""


# test configurations: flags and environment
LEVELS = {"O0": (["-O0"], {}), "O2": (["-O2"], {}),
          "adbefore": (["-O2"], {"ENZYME_BUILD_AD_BEFORE_OPT": "1"})}


def level_params(names, known_wrong: dict[tuple[str, str], str]) -> list:
    """(level, name) pairs over LEVELS for `@pytest.mark.parametrize("level,name", ...)`; the
    pairs in `known_wrong` (mapped to the reason) are strict xfails: still wrong, and a fix
    must remove them from the table."""
    import pytest
    return [pytest.param(level, name, marks=pytest.mark.xfail(strict=True, reason=known_wrong[(name, level)]))
            if (name, level) in known_wrong else (level, name)
            for name in sorted(names) for level in sorted(LEVELS)]


def built_and_run(workdir, text: str, flags=("-O2",), env=None, *, cxx: bool = False, extra=()):
    """Build `text` with the enzyme-build CLI (the build must succeed) and run it; returns the
    run's CompletedProcess (stdout and stderr as text)."""
    src = os.path.join(str(workdir), "p.cc" if cxx else "p.c")
    exe = os.path.join(str(workdir), "p")
    with open(src, "w") as fh:
        fh.write(text)
    cli = os.path.join(os.path.dirname(sys.executable), "enzyme-build")
    r = subprocess.run([cli, "c++" if cxx else "cc", *flags, *extra, src, "-o", exe, "-lm"], capture_output=True,
                       text=True, timeout=600, env={**os.environ, **(env or {})})
    assert r.returncode == 0, r.stderr
    return subprocess.run([exe], capture_output=True, text=True, timeout=120)


def fd_rows(workdir, text: str, flags=("-O2",), env=None, *, cxx: bool = False, extra=()) -> list[list[float]]:
    """Build `text` with the enzyme-build CLI, run it, return its "rev fwd fd" rows."""
    out = built_and_run(workdir, text, flags, env, cxx=cxx, extra=extra)
    assert out.returncode == 0, out.stderr
    return [[float(v) for v in line.split()] for line in out.stdout.splitlines()]


def check_fd_rows(rows, n: int, *, agree: float = 1e-10, fd_tol: float = 1e-5) -> None:
    """Reverse equals forward, both match the central difference, and the gradient is not
    trivially zero."""
    import pytest
    assert len(rows) == n, rows
    for i, (rev, fwd, fd) in enumerate(rows):
        assert rev == pytest.approx(fwd, rel=agree, abs=agree), (i, rows)
        assert rev == pytest.approx(fd, rel=fd_tol, abs=fd_tol), (i, rows)
    assert any(abs(r[0]) > 1e-3 for r in rows), rows


def check_program_gradient(workdir, program: str, level: str, n: int = 4) -> None:
    """Build a program defining `double f(const double *x)` (after FD_HEAD, with fd_main) in a
    LEVELS configuration and check that reverse mode, forward mode and central differences
    agree on every input."""
    flags, env = LEVELS[level]
    check_fd_rows(fd_rows(workdir, FD_HEAD + program + fd_main(n), flags, env), n)


def right_or_refused(workdir, text: str, flags=("-O2",), env=None, *, fd_tol: float = 1e-5,
                     cxx: bool = False) -> str | None:
    """Build `text` (an fd_main program, or a CXX_FD_MAIN one with `cxx`): if it builds, every
    gradient must match its central difference and None is returned; otherwise the build
    must be a clean refusal (exit 1, no traceback), whose stderr is returned for the caller
    to check the message."""
    import pytest
    src = os.path.join(str(workdir), "p.cc" if cxx else "p.c")
    exe = os.path.join(str(workdir), "p")
    with open(src, "w") as fh:
        fh.write(text)
    cli = os.path.join(os.path.dirname(sys.executable), "enzyme-build")
    r = subprocess.run([cli, "c++" if cxx else "cc", *flags, src, "-o", exe, "-lm"], capture_output=True, text=True,
                       timeout=300, env={**os.environ, **(env or {})})
    if r.returncode == 0:
        out = subprocess.run([exe], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0 and out.stdout.strip(), (out.returncode, out.stderr)
        for rev, fwd, fd in ([float(v) for v in line.split()] for line in out.stdout.splitlines()):
            assert rev == pytest.approx(fd, rel=fd_tol, abs=fd_tol)
        return None
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    return r.stderr


def check_gradients(workdir, text: str, flags=("-O2",), env=None, *, cxx: bool = False, n: int = 4,
                    may_refuse: str | tuple[str, ...] | None = None, agree: float = 1e-10,
                    fd_tol: float = 1e-5) -> None:
    """Build and run `text` (an fd_main program, or a CXX_FD_MAIN one with `cxx`). Without
    `may_refuse`, reverse, forward and central differences must agree on all `n` inputs
    (`check_fd_rows`). With it, a clean refusal whose message names one of `may_refuse` is
    accepted too (`right_or_refused`): a build that succeeds must still be right."""
    if may_refuse is None:
        check_fd_rows(fd_rows(workdir, text, flags, env, cxx=cxx), n, agree=agree, fd_tol=fd_tol)
        return
    stderr = right_or_refused(workdir, text, flags, env, cxx=cxx, fd_tol=fd_tol)
    words = (may_refuse,) if isinstance(may_refuse, str) else may_refuse
    assert stderr is None or any(w in stderr for w in words), stderr


def cache_plan(workdir, text: str, head: str = "cache plan of @diffe_f (combined mode)", *,
               cxx: bool = False) -> str:
    """Build `text` (an fd_main program, or a CXX_FD_MAIN one with `cxx`) at -O2 keeping its
    intermediate files and return the cache plan of one derived function (the one `head`
    names; for C++, by default the first combined gradient, its name mangled)."""
    keep = os.path.join(str(workdir), "keep")
    fd_rows(workdir, text, ["-O2"], {"ENZYME_BUILD_KEEP": keep}, cxx=cxx)
    with open(os.path.join(keep, "p.ad", "cache-plan.txt")) as fh:
        plan = fh.read()
    if cxx and head == "cache plan of @diffe_f (combined mode)":
        head = next(line for line in plan.splitlines() if line.startswith("cache plan of @diffe_"))
    assert head in plan, plan
    return plan.split(head, 1)[1].split("\n\n", 1)[0]
