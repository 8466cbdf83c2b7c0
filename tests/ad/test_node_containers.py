"""Node-based standard containers in differentiated C++ code.

The class: a std::map, std::set, std::multiset or std::list whose nodes hold differentiated
data. libstdc++ links and walks those nodes in compiled code (`_Rb_tree_insert_and_rebalance`,
`_Rb_tree_increment`, `_List_node_base::_M_hook`). Treated as inactive calls, the shadow
nodes' links did not follow the primal ones: std::map crashed, std::list gave all-zero
gradients. Each such call now runs once more on the shadows (ad/sweep.py:
mirror_node_call), so the shadow structure is the primal's image, where the function
reaches the nodes itself (the container's routines inlined into it). Nodes handed in by a
caller, as with AD before optimization or a container routine that stays a call, are
refused with the container named. The same containers holding only indices stay right,
as do std::unordered_map and std::deque (inline code).
"""
from __future__ import annotations

import pytest

from ad_helpers import CXX_FD_HEAD, CXX_FD_MAIN, LEVELS, check_fd_rows, fd_rows, right_or_refused

# right at -O0 and -O2 (forward and reverse against central differences); refused with AD
# before optimization, where the tree's routines are separate functions
MIRRORED = {
    "map_by_key": ("std::map/std::set", r"""
#include <map>
double f(const double *x) {
  std::map<int, double> m;
  for (int i = 0; i < 12; i++) m[(i * 5) % 7] += x[i % 4] * (i + 1);
  double s = 0; for (int k = 0; k < 7; k++) s += m[k] * m[k] * (k + 1);
  return s;
}
"""),
    "map_iterated": ("std::map/std::set", r"""
#include <map>
double f(const double *x) {
  std::map<int, double> m;
  for (int i = 0; i < 8; i++) m[i % 3] += x[i % 4] * (i + 1);
  double s = 0; for (auto &kv : m) s += kv.second * kv.second * (kv.first + 1);
  return s;
}
"""),
    "multiset_keys": ("std::map/std::set", r"""
#include <set>
double f(const double *x) {
  std::multiset<double> m;
  for (int i = 0; i < 4; i++) m.insert(x[i] * x[i] + 0.1 * i);
  double s = 0; int k = 1; for (double v : m) s += v * k++;
  return s;
}
"""),
    "list": ("std::list", r"""
#include <list>
double f(const double *x) {
  std::list<double> l;
  for (int i = 0; i < 6; i++) { if (i % 2) l.push_back(x[i % 4] * (i + 1)); else l.push_front(std::sin(x[i % 4])); }
  double s = 0, w = 1; for (double v : l) { s += v * w; w += 1; }
  return s;
}
"""),
}

RIGHT = {
    "index_containers": r"""
#include <map>
#include <set>
#include <list>
double f(const double *x) {
  std::map<int, int> where; std::set<int> seen; std::list<int> order;
  for (int i = 0; i < 8; i++) { where[(i * 3) % 5] = i % 4; seen.insert(i % 3); order.push_back((i * 7) % 4); }
  double s = 0;
  for (auto &kv : where) s += x[kv.second] * x[kv.second] * (kv.first + 1);
  for (int k : seen) s += std::sin(x[k]) * k;
  for (int k : order) s += x[k] * 0.5;
  return s;
}
""",
    "unordered_map": r"""
#include <unordered_map>
double f(const double *x) {
  std::unordered_map<int, double> m;
  for (int i = 0; i < 40; i++) m[(i * 7) % 23] += x[i % 4] * (i + 1);
  double s = 0; for (int k = 0; k < 23; k++) { auto it = m.find(k); if (it != m.end()) s += it->second * it->second; }
  return s;
}
""",
    "deque": r"""
#include <deque>
double f(const double *x) {
  std::deque<double> d;
  for (int i = 0; i < 100; i++) { if (i % 3) d.push_back(x[i % 4] * 0.01 * i); else d.push_front(std::cos(x[i % 4]) * 0.01); }
  double s = 0; for (size_t i = 0; i < d.size(); i++) s += d[i] * d[(i + 1) % d.size()];
  return s;
}
""",
}


@pytest.mark.parametrize("level", ["O0", "O2"])
@pytest.mark.parametrize("name", sorted(set(MIRRORED) - {"map_by_key"}))
def test_active_nodes_are_mirrored_on_their_shadows(name, level, tmp_path):
    flags, env = LEVELS[level]
    check_fd_rows(fd_rows(tmp_path, CXX_FD_HEAD + MIRRORED[name][1] + CXX_FD_MAIN, flags, env, cxx=True), 4)


@pytest.mark.parametrize("config", ["map_by_key-O2", "map_by_key-adbefore", "map_iterated-adbefore",
                                    "multiset_keys-adbefore", "list-adbefore"])
def test_nodes_from_a_caller_are_refused_with_the_container_named(config, tmp_path):
    """`m[k]` leaves std::map::operator[] a call even at -O2: its tree routines get the map
    from their caller. With AD before optimization every routine is a call."""
    name, level = config.split("-")
    container, body = MIRRORED[name]
    flags, env = LEVELS[level]
    stderr = right_or_refused(tmp_path, CXX_FD_HEAD + body + CXX_FD_MAIN, flags, env, cxx=True)
    assert stderr is not None, "built: the gradient would follow shadow links nobody checked"
    assert stderr.count("error:") == 1 and container in stderr and "differentiated data" in stderr
    assert "std::vector" in stderr   # the hint: where to keep the values instead


@pytest.mark.parametrize("level", ["O0", "O2"])
@pytest.mark.parametrize("name", sorted(RIGHT))
def test_index_containers_and_inline_ones_stay_right(name, level, tmp_path):
    flags, env = LEVELS[level]
    check_fd_rows(fd_rows(tmp_path, CXX_FD_HEAD + RIGHT[name] + CXX_FD_MAIN, flags, env, cxx=True), 4)
