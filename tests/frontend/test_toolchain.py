"""Toolchain discovery (order, version checks, cache) and `enzyme-build doctor`."""
from __future__ import annotations

import os
import subprocess
import sys

from frontend_helpers import ENZYME_BUILD

from enzyme_build import LLVM_MAJOR, toolchain


def test_discovery_order_env_first_then_path_then_llvm_dir():
    assert toolchain.candidates("llvm-link", {}) == [
        f"llvm-link-{LLVM_MAJOR}", f"/usr/lib/llvm-{LLVM_MAJOR}/bin/llvm-link"]
    assert toolchain.candidates("clang", {"ENZYME_BUILD_CLANG": "/x/clang"}) == ["/x/clang"]
    assert toolchain.candidates("ld.lld", {"ENZYME_BUILD_LLVM_BIN": "/opt/l/bin"}) == [
        f"/opt/l/bin/ld.lld-{LLVM_MAJOR}", "/opt/l/bin/ld.lld"]


def test_parse_version_of_real_banners():
    assert toolchain.parse_version("Debian clang version 22.1.8 (1~deb12u1)\nTarget: x") == "22.1.8"
    assert toolchain.parse_version("Debian LLD 22.1.8 (compatible with GNU linkers)") == "22.1.8"
    assert toolchain.parse_version("LLVM (http://llvm.org/):\n  LLVM version 22.1.8\n") == "22.1.8"
    assert toolchain.parse_version("nothing here") is None


def test_every_tool_is_found_with_the_right_major():
    for key in toolchain.TOOLS:
        tool, attempts = toolchain.search(key)
        assert tool is not None, attempts
        assert tool.major == LLVM_MAJOR and os.path.isabs(tool.path)


def test_llvm_bin_dir_override(tmp_path):
    env = dict(os.environ, ENZYME_BUILD_LLVM_BIN=f"/usr/lib/llvm-{LLVM_MAJOR}/bin",
               XDG_CACHE_HOME=str(tmp_path))
    code = ("from enzyme_build import toolchain; print(toolchain.find('llvm-link').path);"
            "print(toolchain.find('llvm-link').path)")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.split() == [f"/usr/lib/llvm-{LLVM_MAJOR}/bin/llvm-link"] * 2
    assert (tmp_path / "enzyme-build" / "toolchain.json").is_file()


def test_cache_is_invalidated_when_the_tool_changes(tmp_path):
    fake = tmp_path / "clang"
    fake.write_text("#!/bin/sh\necho 'clang version 22.0.1'\n")
    fake.chmod(0o755)
    env = dict(os.environ, ENZYME_BUILD_CLANG=str(fake), XDG_CACHE_HOME=str(tmp_path / "c"))
    code = "from enzyme_build import toolchain; print(toolchain.find('clang').version)"
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    fake.write_text("#!/bin/sh\necho 'clang version 22.1.1'   \n")
    second = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert (first.stdout.strip(), second.stdout.strip()) == ("22.0.1", "22.1.1")


def test_optional_tools_are_remembered_and_a_missing_one_is_not(tmp_path):
    """opt and llc out of process (`backend.find_tool`): the first compile runs `--version`
    of each, later ones read the on-disk cache; a tool that is missing stays unremembered,
    so installing it later is seen."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "ran"
    fake = bindir / f"opt-{LLVM_MAJOR}"
    fake.write_text(f"#!/bin/sh\necho run >> {log}\necho 'LLVM version {LLVM_MAJOR}.1.8'\n")
    fake.chmod(0o755)
    env = dict(os.environ, ENZYME_BUILD_LLVM_BIN=str(bindir), XDG_CACHE_HOME=str(tmp_path / "c"))
    code = ("from enzyme_build.llvm import backend; print(backend.find_tool('opt'), backend.find_tool('llc'))")
    runs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
            for _ in range(3)]
    assert [r.stdout.split() for r in runs] == [[str(fake), "None"]] * 3, [r.stderr for r in runs]
    assert log.read_text().split() == ["run"]
    llc = bindir / f"llc-{LLVM_MAJOR}"
    llc.write_text(f"#!/bin/sh\necho 'LLVM version {LLVM_MAJOR}.1.8'\n")
    llc.chmod(0o755)
    later = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert later.stdout.split() == [str(fake), str(llc)], later.stderr


def test_doctor_reports_tools_and_llvmlite():
    proc = subprocess.run([ENZYME_BUILD, "doctor"], capture_output=True, text=True,
                          env=dict(os.environ, COLUMNS="200"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for key in toolchain.TOOLS:
        assert key in proc.stdout
    assert "llvmlite" in proc.stdout and f"{LLVM_MAJOR}." in proc.stdout


def test_doctor_fails_with_the_fix_when_tools_are_missing(tmp_path):
    env = dict(os.environ, ENZYME_BUILD_LLVM_BIN=str(tmp_path), COLUMNS="200",
               XDG_CACHE_HOME=str(tmp_path))
    proc = subprocess.run([ENZYME_BUILD, "doctor"], capture_output=True, text=True, env=env)
    assert proc.returncode == 1
    assert "missing" in proc.stdout and "apt-get install -y clang-22 llvm-22 lld-22" in proc.stdout
    assert "Traceback" not in proc.stderr


def test_help_lists_subcommands():
    proc = subprocess.run([ENZYME_BUILD, "--help"], capture_output=True, text=True)
    assert proc.returncode == 0
    for name in ("cc", "c++", "doctor"):
        assert name in proc.stdout
