"""LLVM's `opt` on the module, on all functions or some of them.

llvmlite does not expose every pass the AD stage needs (the Scalarizer, loop-idiom), so
the stage writes bitcode, runs Debian's `opt-22` and reads the result back.  Functions a
run must not touch are kept out of it with a temporary `optnone noinline` (and a marker
attribute saying so, so that exactly what was added is removed afterwards).
"""
from __future__ import annotations

import os
import re
import subprocess
import tempfile

_KEPT_OUT = '"enzyme-build-kept-out"'
_HAD_NOINLINE = '"enzyme-build-noinline"'
_NAME = re.compile(r'(@(?:"[^"]*"|[-\w$.]+))\(')


def defined_functions(text: str) -> list[str]:
    return [m.group(1) for line in text.split("\n") if line.startswith("define ")
            for m in [_NAME.search(line)] if m]


def keep_out(text: str, names: set[str]) -> str:
    """Give the named functions `optnone noinline` (unless they are alwaysinline, which
    the verifier would reject) so that an `opt` run leaves them as they are."""
    lines = text.split("\n")
    groups = {}
    for line in lines:
        m = re.match(r'^attributes (#\d+) = \{(.*)\}$', line)
        if m:
            groups[m.group(1)] = m.group(2)
    for i, line in enumerate(lines):
        if not line.startswith("define "):
            continue
        m = _NAME.search(line)
        if not m or m.group(1) not in names:
            continue
        group = re.search(r'\) [^{]*?(#\d+)', line)
        attrs = groups.get(group.group(1), "") if group else ""
        if "alwaysinline" in attrs or "optnone" in attrs.split():
            continue
        extra = f" optnone noinline {_KEPT_OUT}" + (f" {_HAD_NOINLINE}" if "noinline" in attrs.split() else "")
        if group:
            lines[i] = line[:group.start(1)] + extra.strip() + " " + line[group.start(1):]
        else:
            lines[i] = re.sub(r'\s*\{\s*$', extra + " {", line)
    return "\n".join(lines)


def let_in(text: str) -> str:
    """Undo `keep_out`."""
    out = []
    for line in text.split("\n"):
        if line.startswith("attributes #") and _KEPT_OUT in line:
            keep_noinline = _HAD_NOINLINE in line
            line = line.replace(" " + _KEPT_OUT, "").replace(" " + _HAD_NOINLINE, "")
            line = re.sub(r'\boptnone ', "", line)
            if not keep_noinline:
                line = re.sub(r'\bnoinline ', "", line)
        out.append(line)
    return "\n".join(out)


def run_opt(module, llvm, pipeline: str, *, keep: set[str] | None = None, what: str, hint: str):
    """`opt -passes=<pipeline>` on the module, with the functions in `keep` left as they
    are. `what` names the step in the error raised if opt fails."""
    from .. import toolchain
    from ..errors import EnzymeBuildError
    if keep:
        module = llvm.parse_assembly(keep_out(module.text(), keep), module.name)
    opt = toolchain.find("opt").path
    with tempfile.TemporaryDirectory(prefix="enzyme-build-opt-") as tmp:
        src, dst = os.path.join(tmp, "in.bc"), os.path.join(tmp, "out.bc")
        with open(src, "wb") as fh:
            fh.write(module.bitcode())
        proc = subprocess.run([opt, f"-passes={pipeline}", src, "-o", dst],
                              capture_output=True, text=True, timeout=3600)
        if proc.returncode != 0:
            raise EnzymeBuildError(f"{what} failed (opt exit status {proc.returncode}): "
                                   f"{proc.stderr.strip()[:500]}", hint=hint)
        with open(dst, "rb") as fh:
            out = llvm.parse_bitcode(fh.read(), module.name)
    if keep:
        out = llvm.parse_assembly(let_in(out.text()), module.name)
    return out
