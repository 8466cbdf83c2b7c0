"""libstdc++ functions without a body that carry no derivative (iostream inserters, hashing,
std::string and std::map internals, exceptions, time, rand) are known inactive: C++ code
that logs, looks values up by name or throws on bad input differentiates as it is."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

ENZYME_BUILD = os.path.join(os.path.dirname(sys.executable), "enzyme-build")
PROGRAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs_cxx")

# program -> the gradient it prints (closed forms in the sources' comments)
EXPECTED = {"iostream_hash_lookup.cc": "11", "iostream_map_string_exceptions.cc": "18.5"}


@pytest.mark.parametrize("level", ["-O0", "-O2"])
@pytest.mark.parametrize("program", sorted(EXPECTED))
def test_cxx_program_with_inactive_library_calls(tmp_path, program, level):
    done = subprocess.run([ENZYME_BUILD, "c++", level, os.path.join(PROGRAMS, program), "-o", "prog"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    out = subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True)
    assert out.returncode == 0
    assert out.stdout.strip().splitlines()[-1] == EXPECTED[program]
