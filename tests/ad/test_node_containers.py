"""Node-based standard containers in differentiated C++ code.

The class: a std::map, std::set, std::multiset or std::list whose nodes hold differentiated
data. libstdc++ links and walks those nodes in compiled code (`_Rb_tree_insert_and_rebalance`,
`_Rb_tree_increment`, `_List_node_base::_M_hook`), which cannot be repeated on the nodes'
shadows, so the shadow nodes' links do not follow the primal ones. These programs crashed
(std::map) or gave all-zero gradients (std::list); they are refused now, with a message
naming the container. The same containers holding only indices, in a function whose other
data is differentiated, stay right, as do std::unordered_map and std::deque (inline code).
"""
from __future__ import annotations

import pytest

from ad_helpers import CXX_FD_HEAD, CXX_FD_MAIN, LEVELS, check_fd_rows, fd_rows, right_or_refused

REFUSED = {
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


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_active_nodes_are_refused_with_the_container_named(name, level, tmp_path):
    container, body = REFUSED[name]
    flags, env = LEVELS[level]
    stderr = right_or_refused(tmp_path, CXX_FD_HEAD + body + CXX_FD_MAIN, flags, env, cxx=True)
    assert stderr is not None, "built: the gradient would follow stale shadow links"
    assert stderr.count("error:") == 1 and container in stderr and "differentiated data" in stderr
    assert "std::vector" in stderr   # the hint: where to keep the values instead


@pytest.mark.parametrize("level", ["O0", "O2"])
@pytest.mark.parametrize("name", sorted(RIGHT))
def test_index_containers_and_inline_ones_stay_right(name, level, tmp_path):
    flags, env = LEVELS[level]
    check_fd_rows(fd_rows(tmp_path, CXX_FD_HEAD + RIGHT[name] + CXX_FD_MAIN, flags, env, cxx=True), 4)
