"""std::string kept beside differentiated data: named parameters, labelled samples.

The class: objects that hold a `std::string` built at run time next to active doubles -- a
`struct {std::string name; double value;}`, a `std::vector<std::pair<std::string, double>>`
of parameters looked up by name, a `std::unordered_map<std::string, double>` filled from the
inputs. The string's heap buffer comes from `std::string::_M_create`, an extern-template
member without a body, which the library table counts as an inactive routine; its result
had no shadow, and storing it into the object (which has one) was refused at -O2 ("a pointer
to memory without a shadow ... is stored into active memory"), whatever the string's length.
The AD stage now gives those calls a definition of the same thing (`stage.define_string_create`:
a block of capacity + 1 from operator new), whose block the engine shadows like any other.
Names of 1 to 40 characters (the inline buffer holds 15), checked in reverse and forward mode
against central differences at -O0, -O2 and with AD before optimization. With AD before
optimization forward mode returned a pointer a library routine made (the hash table's bucket
array from `allocator_traits::allocate`) as its own shadow: the table and its shadow freed
the same block (a double free). Such a return is now refused like a store of it, and the
inlining it names lets the engine see the allocation.
"""
from __future__ import annotations

import pytest

from ad_helpers import CXX_FD_HEAD, CXX_FD_MAIN, LEVELS, check_gradients

PROGRAMS = {
    # a value with a name built from a C string at run time (short and long)
    "named_values": r"""
#include <string>
static const char *volatile names[4] = {"a", "bias", "a name longer than fifteen", "w"};
struct Named { std::string name; double v; };
double f(const double *x) {
  double s = 0;
  for (int i = 0; i < 4; i++) {
    Named n{names[i], x[i] * x[(i + 1) % 4]};
    s += n.v * (1.0 + 0.01 * n.name.size()) + std::sin(n.v);
  }
  return s;
}
""",
    # parameters in a vector of (name, value) pairs, looked up by name
    "parameter_list": r"""
#include <string>
#include <utility>
#include <vector>
static const char *volatile keys[4] = {"rate_constant_forward", "k2", "diffusion_coefficient_x", "decay"};
static double lookup(const std::vector<std::pair<std::string, double>> &ps, const std::string &key) {
  for (const auto &p : ps) if (p.first == key) return p.second;
  return 0.0;
}
double f(const double *x) {
  std::vector<std::pair<std::string, double>> ps;
  for (int i = 0; i < 4; i++) ps.emplace_back(keys[i], x[i]);
  double a = lookup(ps, "rate_constant_forward"), b = lookup(ps, "k2");
  double c = lookup(ps, std::string("diffusion_") + "coefficient_x"), d = lookup(ps, "decay");
  return a * b + std::exp(-d) * c * c + a * std::cos(d);
}
""",
    # an unordered_map keyed by long names
    "hash_map": r"""
#include <string>
#include <unordered_map>
static const char *volatile keys[4] = {"alpha_parameter_one", "beta", "gamma_parameter_three", "delta_parameter_four"};
double f(const double *x) {
  std::unordered_map<std::string, double> par;
  for (int i = 0; i < 4; i++) par[keys[i]] = x[i];
  double s = 0;
  for (int t = 0; t < 3; t++) s += par[keys[t]] * par[keys[t + 1]] + std::tanh(par[keys[(t + 2) % 4]]);
  return s;
}
""",
}


# (program, level) that may be refused, with the words the refusal must use (none left: a
# heap string in an active object with AD before optimization is inlined where a library
# routine made its pointer, and a growing vector of (string, double) pairs is placed by the
# memory type analysis; tests/ad/test_record_moves.py)
MAY_REFUSE: dict[tuple[str, str], str] = {}


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_string_members(name, level, tmp_path):
    flags, env = LEVELS[level]
    text = CXX_FD_HEAD + PROGRAMS[name] + CXX_FD_MAIN
    check_gradients(tmp_path, text, flags, env, cxx=True, may_refuse=MAY_REFUSE.get((name, level)))
