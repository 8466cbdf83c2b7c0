"""The pre-AD pipeline's runs (ad/optrun.py: optimize): -O2 without unrolling in the release
`opt`, the same code as llvmlite's in-process pipeline; then the full-unroll cleanup, which
unrolls small constant-count loops completely and leaves long ones; a failing `opt` is one
message and leaves no files."""
from __future__ import annotations

import os
import re
import subprocess
import tempfile

import pytest

from ad_helpers import frontend_ir
from enzyme_build import llvm, toolchain
from enzyme_build.ad import optrun
from enzyme_build.ad.stage import canonicalize_markers
from enzyme_build.errors import EnzymeBuildError
from enzyme_build.llvm import backend

HERE = os.path.dirname(os.path.abspath(__file__))
SMALL_LOOPS = os.path.join(HERE, "programs", "small_loops.c")

needs_tools = pytest.mark.skipif(not backend.external_tools_enabled(),
                                 reason="the release opt/llc of LLVM 22 are not installed")


def _module(tmp_path):
    return llvm.parse_assembly(canonicalize_markers(frontend_ir(SMALL_LOOPS, str(tmp_path))), "small_loops")


def _without_names(module, tmp_path, tag: str) -> str:
    """The module's text with every local name replaced by a number (opt -S
    --discard-value-names on its bitcode), without the header and attribute groups: the
    attributes LLVM 22.1.x gives intrinsic declarations differ between point releases, and
    struct types parsed twice into one context are renamed apart (%struct.body.0)."""
    bc = tmp_path / f"{tag}.bc"
    bc.write_bytes(module.bitcode())
    out = subprocess.run([toolchain.find("opt").path, "-S", "--discard-value-names", "-passes=verify", str(bc)],
                         check=True, capture_output=True, text=True).stdout
    out = re.sub(r"(%struct\.[A-Za-z_]\w*?)(?:\.\d+)+\b", r"\1", out)   # types renamed apart in one context
    return "\n".join(line for line in out.split("\n")
                     if not line.startswith(("; ModuleID", "source_filename", "attributes #")))


def _loop_latches(text: str, function: str) -> int:
    body = text[text.index(f"@{function}("):].split("\n}\n")[0]
    return len(re.findall(r"!llvm\.loop ", body))


@needs_tools
def test_o2_in_opt_is_the_in_process_pipeline(tmp_path, monkeypatch):
    tool = optrun.optimize(_module(tmp_path), llvm, 2, unroll=False)
    monkeypatch.setenv("ENZYME_BUILD_IN_PROCESS", "1")
    in_process = optrun.optimize(_module(tmp_path), llvm, 2, unroll=False)
    llvm.verify(tool)
    a, b = _without_names(tool, tmp_path, "tool"), _without_names(in_process, tmp_path, "in")
    assert a == b
    assert _loop_latches(tool.text(), "poly6") == 2   # the degree-6 loop is not unrolled yet


@needs_tools
def test_the_module_given_is_consumed(tmp_path):
    module = _module(tmp_path)
    out = optrun.optimize(module, llvm, 2, unroll=False)
    assert module.ref.closed and out is not module and out.name == module.name


@needs_tools
@pytest.mark.parametrize("in_process", [False, True], ids=["opt", "in-process"])
def test_full_unroll_takes_small_constant_loops_only(tmp_path, monkeypatch, in_process):
    if in_process:
        monkeypatch.setenv("ENZYME_BUILD_IN_PROCESS", "1")
    module = optrun.optimize(_module(tmp_path), llvm, 2, unroll=False)
    before = module.text()
    module = optrun.optimize(module, llvm, 2, unroll="full")
    llvm.verify(module)
    after = module.text()
    # the 3-component, 3x3, 5-tap and degree-6 loops go; the run-time loops around them stay
    assert _loop_latches(after, "pairs") < _loop_latches(before, "pairs")
    assert _loop_latches(after, "taps") < _loop_latches(before, "taps")
    assert _loop_latches(before, "poly6") == 2 and _loop_latches(after, "poly6") == 1
    assert _loop_latches(after, "sum1000") == 1              # 1000 iterations: kept a loop
    assert "[3 x [3 x double]]" not in after[after.index("@rotate("):].split("\n}\n")[0]


def test_a_failing_opt_is_one_message_and_leaves_nothing(tmp_path, monkeypatch):
    fake = tmp_path / "opt"
    fake.write_text("#!/bin/sh\necho 'opt: error: out of space' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setattr(backend, "external_tools_enabled", lambda: True)
    monkeypatch.setattr(toolchain, "find", lambda key: type("T", (), {"path": str(fake)})())
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    module = llvm.parse_assembly("define i32 @f() {\n  ret i32 0\n}\n", "m")
    with pytest.raises(EnzymeBuildError) as err:
        optrun.optimize(module, llvm, 2, unroll=False)
    assert "the pre-AD optimization failed" in err.value.message and "out of space" in err.value.message
    assert list(scratch.iterdir()) == []
