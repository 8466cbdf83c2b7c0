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
            # a function that had no attributes of its own leaves its group empty, which
            # LLVM's parser rejects: a neutral string attribute keeps the group valid
            line = re.sub(r'= \{\s*\}$', '= { "enzyme-build-let-in" }', line)
        out.append(line)
    return "\n".join(out)


# opt's switches for the pre-AD pipeline's tuning (what llvmlite's PipelineTuningOptions and
# llvm.optimize's process-wide unroller options set in-process)
_NO_VECTORIZE = ("-vectorize-loops=false", "-vectorize-slp=false", "-interleave-loops=false")
_UNROLL = {False: ("-disable-loop-unrolling",),
           "full": ("-unroll-allow-partial=false", "-unroll-runtime=false", "-unroll-allow-peeling=false")}


def optimize(module, llvm, level: int, *, unroll, vectorize: bool = False):
    """The per-module default pipeline (-O<level>) as `llvm.optimize` runs it, in Debian's
    release `opt` when it and `llc` are installed (else in-process): llvmlite's LLVM is built
    with assertions, and on the 50k-instruction build_scaling program the pre-AD pipeline's
    two runs take 1.97 + 1.70 s CPU in-process against 1.23 + 0.89 s in `opt`, with the same
    code (docs/build-performance.md). `unroll`: False, or "full" (complete unrolling only).
    Returns the optimized module; the one given is consumed."""
    from ..llvm import backend
    if not backend.external_tools_enabled() or unroll not in _UNROLL or vectorize:
        llvm.optimize(module, level, unroll=unroll, vectorize=vectorize)
        return module
    return run_opt(module, llvm, f"default<O{level}>", what="the pre-AD optimization",
                   hint="check that opt of LLVM 22 runs (enzyme-build doctor)",
                   options=(*_UNROLL[unroll], *_NO_VECTORIZE, "--relocation-model=pic"), consume=True)


def run_opt(module, llvm, pipeline: str, *, keep: set[str] | None = None, what: str, hint: str,
            options: tuple[str, ...] = (), consume: bool = False):
    """`opt -passes=<pipeline> <options>` on the module, with the functions in `keep` left as
    they are. `what` names the step in the error raised if opt fails. With `consume`, the
    module given is closed once its bitcode is written (its memory is not held while opt
    runs)."""
    from .. import toolchain
    from ..errors import EnzymeBuildError
    if keep:
        module = llvm.parse_assembly(keep_out(module.text(), keep), module.name)
    opt = toolchain.find("opt").path
    name = module.name
    with tempfile.TemporaryDirectory(prefix="enzyme-build-opt-") as tmp:
        src, dst = os.path.join(tmp, "in.bc"), os.path.join(tmp, "out.bc")
        with open(src, "wb") as fh:
            fh.write(module.bitcode())
        if consume:
            module.close()
        proc = subprocess.run([opt, f"-passes={pipeline}", *options, src, "-o", dst],
                              capture_output=True, text=True, timeout=3600)
        if proc.returncode != 0:
            raise EnzymeBuildError(f"{what} failed (opt exit status {proc.returncode}): "
                                   f"{proc.stderr.strip()[:500]}", hint=hint)
        with open(dst, "rb") as fh:
            out = llvm.parse_bitcode(fh.read(), name)
    if keep:
        out = llvm.parse_assembly(let_in(out.text()), name)
    return out
