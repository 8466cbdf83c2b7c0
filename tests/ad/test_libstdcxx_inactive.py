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


# std::string built and used inside the differentiated function: at -O0 its members are
# calls to extern-template instantiations without a body (_M_local_data, _M_set_length,
# the constructors), known inactive by their mangled prefix. Members of the class: a named
# struct holding a string next to the active value, appending and comparing, a string
# choosing a branch, a string parsed into a constant.
STRING_PROGRAMS = {
    "named_struct": r"""
#include <string>
struct Named { std::string name; double v; };
double f(const double *x) {
  Named n{"alpha", x[0] * x[1]};
  return n.v * n.v + x[2] * x[3];
}""",
    "append_and_compare": r"""
#include <string>
double f(const double *x) {
  std::string tag = "w";
  for (int i = 0; i < 3; i++) tag += char('0' + i);
  double w = tag == "w012" ? 2.0 : 3.0;
  return w * x[0] * x[2] + (tag.size() > 3 ? x[1] * x[1] : 0.0) + std::sin(x[3]);
}""",
    "string_branch_and_parse": r"""
#include <string>
#include <cstdlib>
double f(const double *x) {
  std::string mode = x[0] > 0 ? "square" : "linear";
  std::string scale = "1.5";
  double s = std::strtod(scale.c_str(), nullptr);
  double r = mode.compare("square") == 0 ? x[0] * x[0] : x[0];
  return s * r * x[1] + x[2] / (1.0 + x[3] * x[3]);
}""",
}


@pytest.mark.parametrize("level", ["O0", "O2"])
@pytest.mark.parametrize("name", sorted(STRING_PROGRAMS))
def test_string_built_in_differentiated_code(tmp_path, name, level):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from ad_helpers import CXX_FD_HEAD, CXX_FD_MAIN, LEVELS, check_fd_rows, fd_rows
    flags, env = LEVELS[level]
    rows = fd_rows(tmp_path, CXX_FD_HEAD + STRING_PROGRAMS[name] + CXX_FD_MAIN, flags, env, cxx=True)
    check_fd_rows(rows, 4, agree=1e-9)
