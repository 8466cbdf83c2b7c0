"""Helpers for AD tests: build C through the AD stage directly (no wrapper) and run it."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "acceptance")   # the acceptance programs
CLANG = shutil.which("clang-22") or "/usr/lib/llvm-22/bin/clang"
CLANGXX = shutil.which("clang++-22") or "/usr/lib/llvm-22/bin/clang++"


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


def run_program(exe: str) -> subprocess.CompletedProcess:
    return subprocess.run([exe], capture_output=True, text=True, timeout=60)


def enzyme_build_cli() -> str:
    return os.path.join(os.path.dirname(sys.executable), "enzyme-build")
