"""Helpers for the custom-rule tests: compile with the wrapper, read embedded bitcode as IR."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

BIN_DIR = os.path.dirname(sys.executable)
ENZYME_BUILD = os.path.join(BIN_DIR, "enzyme-build")
CLANG = shutil.which("clang-22") or "/usr/lib/llvm-22/bin/clang"
LLVM_BIN = "/usr/lib/llvm-22/bin"


def llvm_tool(name: str) -> str:
    return shutil.which(f"{name}-22") or os.path.join(LLVM_BIN, name)


def run(cmd, cwd, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, **kwargs)


def write(directory, name: str, text: str):
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def clang_ir(directory, name: str, text: str, *flags: str) -> str:
    """Unoptimized IR of one TU as clang-22 emits it (the text collect_registry reads)."""
    write(directory, name, text)
    proc = run([CLANG, "-O2", "-Xclang", "-disable-llvm-passes", "-S", "-emit-llvm", *flags,
                name, "-o", "-"], directory)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def wrapper_cc(directory, *args: str) -> subprocess.CompletedProcess:
    return run([ENZYME_BUILD, "cc", *args], directory)


def object_bitcode(path) -> bytes:
    from enzyme_build.link import objfile
    data = open(path, "rb").read()
    bitcode = objfile.embedded_bitcode(data)
    assert bitcode is not None, f"{path} has no embedded bitcode"
    return bitcode


def linked_ir(directory, *objects) -> str:
    """llvm-link the objects' embedded bitcode and return the module text."""
    names = []
    for index, obj in enumerate(objects):
        bc = directory / f"_bc{index}.bc"
        bc.write_bytes(object_bitcode(directory / obj))
        names.append(str(bc))
    proc = run([llvm_tool("llvm-link"), "-S", *names, "-o", "-"], directory)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout

