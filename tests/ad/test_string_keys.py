"""Short std::string keys next to differentiated values (libstdc++'s small-string buffer).

The class: code whose differentiated data sits in the same objects as std::string keys, e.g.
a std::unordered_map<std::string, double> of named parameters (Enzyme's own integration
test `ReverseMode/map.cpp`). Inserting a key moves the string's characters out of its
inline buffer with a run-length memcpy (guarded by "data pointer == inline buffer") into a
node that also holds the double and pointers; the memcpy of unknown length was refused as
moving "mixed double/pointer" data at -O1 and up. The characters are integers: the copy
now carries no derivative, and the values' derivatives are right.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

# Enzyme's test, with a second key and another expression: the caller builds the value map
# and a shadow map holding the same keys, and differentiates through operator[]
PROGRAM = r"""
#include <cstdio>
#include <cmath>
#include <string>
#include <unordered_map>
extern int enzyme_dup;
template <typename T> extern void __enzyme_autodiff(void *, int, T &, T &);
template <typename dict> void square(dict &vals) { vals["x"] = vals["x"] * vals["x"]; }
template <typename dict> void mixed(dict &vals) { vals["y"] = vals["x"] * std::sin(vals["y"]); }
template <typename dict> int check() {
  int bad = 0;
  {
    dict vals; vals["x"] = 3.0;
    dict dvals; dvals["x"] = 1.0;
    __enzyme_autodiff((void *)square<dict>, enzyme_dup, vals, dvals);
    std::printf("square %g %g\n", vals["x"], dvals["x"]);
    bad |= vals["x"] != 9.0 || dvals["x"] != 6.0;
  }
  {
    dict vals; vals["x"] = 0.5; vals["y"] = 1.25;
    dict dvals; dvals["x"] = 0.0; dvals["y"] = 1.0;
    __enzyme_autodiff((void *)mixed<dict>, enzyme_dup, vals, dvals);
    std::printf("mixed %.15g %.15g\n", dvals["x"], dvals["y"]);
    bad |= std::fabs(dvals["x"] - std::sin(1.25)) > 1e-14 || std::fabs(dvals["y"] - 0.5 * std::cos(1.25)) > 1e-14;
  }
  return bad;
}
int main() {
  return check<std::unordered_map<std::string, double>>() * 1 + check<std::unordered_map<const char *, double>>() * 2;
}
"""


@pytest.mark.parametrize("opt", ["-O0", "-O1", "-O2", "-O3"])
def test_string_keyed_maps_of_values(opt, tmp_path):
    src, exe = tmp_path / "map.cc", tmp_path / "map"
    src.write_text(PROGRAM)
    cli = os.path.join(os.path.dirname(sys.executable), "enzyme-build")
    r = subprocess.run([cli, "c++", opt, str(src), "-o", str(exe)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.count("square 9 6") == 2
