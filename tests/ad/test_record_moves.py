"""Records that mix doubles with integers, strings and arrays, moved by library code.

The class: arrays of structs holding a double beside an `int` id, a `std::string` label or a
`std::array<double, 3>`, which the program (or libstdc++) moves around as whole records: a
`std::vector` growing (its relocation copies every element), `std::sort`, `std::reverse` and
`std::rotate` of the elements, an insertion sort or bubble sort by assignment or `std::swap`.
After optimization those moves are integer words and `memcpy`s whose type the memory type
analysis must place, and it could not:

- a pointer into such an array was `getelementptr i8, p, (40 * i + 32)`, or an index made by
  shifts and exact divisions (`(i << 32) >>exact 28`, `(end - begin) /exact 40`), or a
  pointer difference (`first + (middle - last)`); all became "any byte", where every field's
  type met (`memtypes._index_steps`, `_known_multiple`, `_congruence`, `_pointer_distance`);
- a short array inside a struct (`std::array<double, 3>` before a string) was taken to hold
  doubles at every offset of the struct (`type_leaves` spells it element by element);
- a copy tagged as an integer member (`pair.first`) is an integer whatever else is near;
- a std::string's data pointer (loaded from the string's first field) points to characters,
  in its inline buffer or on the heap (`types.string_characters`); a string member after
  other fields has its inline buffer 16 bytes past its own start, not at 16.

Each was refused at -O0 or -O2 ("integer copy ... moves double/int data", "memcpy of mixed
double/int/pointer", "a pointer to memory without a shadow ... is stored"). Checked in reverse
and forward mode against central differences at -O0, -O2 and with AD before optimization.
"""
from __future__ import annotations

import pytest

from ad_helpers import CXX_FD_HEAD, CXX_FD_MAIN, FD_HEAD, LEVELS, check_fd_rows, fd_main, fd_rows, check_gradients

C_PROGRAMS = {
    # an insertion sort of {int, int, double} records by their double (struct assignment)
    "insertion_sorted_records": r"""
typedef struct { int id; int flags; double w; } Rec;
double f(const double *x) {
  Rec r[8];
  for (int i = 0; i < 8; i++) { r[i].id = i; r[i].flags = i & 3; r[i].w = x[i % 4] * (1 + 0.25 * i) + 0.5 * i; }
  for (int i = 1; i < 8; i++) {
    Rec t = r[i];
    int j = i - 1;
    while (j >= 0 && r[j].w > t.w) { r[j + 1] = r[j]; j--; }
    r[j + 1] = t;
  }
  double s = 0;
  for (int i = 0; i < 8; i++) s += (i + 1) * sin(r[i].w) * (r[i].flags ? 1.0 : 0.5) + 0.01 * r[i].id;
  return s;
}
""",
}

CXX_PROGRAMS = {
    # a vector of {name, weight, id} records grown one push_back at a time (relocations)
    "named_records": r"""
#include <string>
#include <vector>
struct Param { std::string name; double w; int id; };
double f(const double *x) {
  std::vector<Param> ps;
  for (int i = 0; i < 6; i++)
    ps.push_back(Param{"parameter_with_a_long_name_" + std::to_string(i), x[i % 4] * (i + 1), i});
  double s = 0;
  for (const Param &q : ps) s += (q.id % 2 ? std::sin(q.w) : q.w * q.w) * (q.name.size() > 27 ? 2.0 : 1.0);
  return s;
}
""",
    # (name, value) pairs grown by emplace_back
    "pair_list": r"""
#include <string>
#include <utility>
#include <vector>
static const char *volatile names[4] = {"a", "b", "a much longer name than fifteen", "c"};
double f(const double *x) {
  std::vector<std::pair<std::string, double>> ps;
  for (int i = 0; i < 4; i++) ps.emplace_back(names[i], x[i]);
  double s = 1;
  for (auto &kv : ps) s = kv.first != "c" ? s * kv.second + 0.5 : s + std::sin(kv.second);
  return s;
}
""",
    # records sorted by their string key (std::sort moves whole records)
    "sorted_by_key": r"""
#include <algorithm>
#include <string>
#include <vector>
struct Entry { std::string key; double value; };
double f(const double *x) {
  std::vector<Entry> es;
  es.reserve(2);
  for (int i = 0; i < 7; i++) es.push_back({std::string(1 + i % 3, char('a' + (i * 5) % 7)), x[i % 4] + 0.1 * i});
  std::sort(es.begin(), es.end(), [](const Entry &a, const Entry &b) { return a.key < b.key; });
  double s = 0;
  for (size_t i = 0; i < es.size(); i++) s += double(i + 1) * es[i].value * es[i].value;
  return s;
}
""",
    # (id, value, group) tuples sorted by value
    "sorted_tuples": r"""
#include <algorithm>
#include <tuple>
#include <vector>
double f(const double *x) {
  std::vector<std::tuple<int, double, int>> v;
  for (int i = 0; i < 12; i++) v.emplace_back(i, std::sin(2.1 * i) + x[i % 4], (i * 3) % 7);
  std::sort(v.begin(), v.end(), [](const auto &a, const auto &b) { return std::get<1>(a) < std::get<1>(b); });
  double s = 0;
  for (size_t k = 0; k < v.size(); k++) s += double(k + 1) * std::get<1>(v[k]) * (std::get<2>(v[k]) + 1);
  return s;
}
""",
    # particles {id, position, label, mass} reversed and rotated
    "particles": r"""
#include <algorithm>
#include <array>
#include <string>
#include <vector>
struct Particle { int id; std::array<double, 3> x; std::string label; double m; };
double f(const double *x) {
  std::vector<Particle> ps;
  for (int i = 0; i < 6; i++)
    ps.emplace_back(Particle{i, {x[i % 4], x[(i + 1) % 4] + i, 0.5 * x[(i + 2) % 4] - i}, i % 3 ? "a light particle x" : "heavy",
                             i % 3 ? 1.0 : 4.0});
  std::reverse(ps.begin(), ps.end());
  std::rotate(ps.begin(), ps.begin() + 2, ps.end());
  double e = 0;
  for (size_t a = 0; a < ps.size(); a++)
    for (size_t b = a + 1; b < ps.size(); b++) {
      double d2 = 0.1;
      for (int c = 0; c < 3; c++) d2 += (ps[a].x[c] - ps[b].x[c]) * (ps[a].x[c] - ps[b].x[c]);
      e += ps[a].m * ps[b].m / std::sqrt(d2) * (ps[a].label.size() > 5 ? 1.0 : 1.5) * (a + 1);
    }
  return e;
}
""",
    # a bubble sort of labelled items with std::swap
    "swapped_items": r"""
#include <string>
#include <utility>
struct Item { std::string label; double v; int rank; };
double f(const double *x) {
  Item items[6];
  for (int i = 0; i < 6; i++) {
    items[i].label = (i % 2 ? "an odd item with a long label " : "even") + std::to_string(i);
    items[i].v = x[i % 4] + 0.75 * i * (i % 2 ? 1 : -1);
    items[i].rank = i;
  }
  for (int a = 0; a < 6; a++)
    for (int b = 0; b + 1 < 6 - a; b++)
      if (items[b].v > items[b + 1].v) std::swap(items[b], items[b + 1]);
  double s = 0;
  for (int i = 0; i < 6; i++) s += (i + 1) * items[i].v * items[i].v * (items[i].label.size() > 10 ? 2.0 : 1.0) + items[i].rank;
  return s;
}
""",
    # std::stable_sort of (group, value) pairs: a temporary buffer from nothrow operator new
    # and merges whose pointers are differences of parameters (`_M_merge_adaptive`)
    "stable_sorted_pairs": r"""
#include <algorithm>
#include <utility>
#include <vector>
double f(const double *x) {
  std::vector<std::pair<int, double>> v;
  for (int i = 0; i < 23; i++) v.push_back({(i * 11) % 5, x[i % 4] * (0.5 + 0.05 * i)});
  std::stable_sort(v.begin(), v.end(),
                   [](const std::pair<int, double> &a, const std::pair<int, double> &b) { return a.first < b.first; });
  double s = 0;
  for (size_t k = 0; k < v.size(); k++) s += std::exp(0.1 * k) * v[k].second * v[k].second;
  return s;
}
""",
}

# (program, level) that may still be refused, with the words the refusal must use:
# std::stable_sort's merges take pointers into one array as separate parameters, and their
# differences index the array; the analysis cannot tell those pointers' distance is a whole
# number of elements; with AD before optimization the element's construction copies it in a
# helper of its own (`__new_allocator<pair<int, double>>::construct`), of no known type
MAY_REFUSE = {("stable_sorted_pairs", "O0"): "integer copy", ("stable_sorted_pairs", "O2"): "integer copy",
              ("stable_sorted_pairs", "adbefore"): "memcpy of data of unknown type"}


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(C_PROGRAMS))
def test_c_record_moves(name, level, tmp_path):
    flags, env = LEVELS[level]
    check_fd_rows(fd_rows(tmp_path, FD_HEAD + C_PROGRAMS[name] + fd_main(), flags, env), 4)


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(CXX_PROGRAMS))
def test_cxx_record_moves(name, level, tmp_path):
    flags, env = LEVELS[level]
    text = CXX_FD_HEAD + CXX_PROGRAMS[name] + CXX_FD_MAIN
    if (name, level) in MAY_REFUSE:
        flags = [*flags, "-Wno-deprecated-declarations"]
    check_gradients(tmp_path, text, flags, env, cxx=True, may_refuse=MAY_REFUSE.get((name, level)))
