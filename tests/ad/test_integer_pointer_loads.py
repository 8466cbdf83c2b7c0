"""Pointers loaded as integers and converted back away from the load.

The class: records holding a pointer beside a double, moved by library code that LLVM
turns into word copies (std::sort's heap and insertion steps over a
`std::vector<std::tuple<double, int, const double *>>`), where the pointer word is loaded
as an `i64` and turned back into a pointer with `inttoptr` only in a later block, or in
several blocks (LLVM sinks one conversion into each successor). The AD stage's rewrite of
`inttoptr (load i64)` into `load ptr` (`stage.pointers_as_integers`) required the two in one
block and the integer used once; otherwise the converted pointer had no shadow and storing
it back into the vector was refused ("a pointer to memory without a shadow is stored into
active memory") at -O0 and -O2.

The same records written in C (`struct {uintptr_t at; double w;}` insertion-sorted by a
`noinline` helper) got silently wrong reverse gradients at -O2 and with AD before
optimization: clang tags `at` as a `long` member, so the record copies were typed
"int + double" and the int word dropped (its shadow, the pointer's shadow, stayed behind
while the records moved), and the word copies of `at` were integers by their member tag. A
word tagged as an integer that the program fills with a pointer now moves as a pointer
(`types.memcpy_element_kind`, `_word_record`; `memtypes._pointer_filled` for the member
tag), and a word the analysis knows as both integer and pointer is a pointer
(`memtypes.range_words`). 8 of 9 builds failed before (six refused, two silently wrong; the
pairs with AD before optimization are still refused); each program is checked in reverse and forward mode against central
differences at -O0, -O2 and with AD before optimization.
"""
from __future__ import annotations

import pytest
from ad_helpers import CXX_FD_HEAD, CXX_FD_MAIN, FD_HEAD, LEVELS, check_fd_rows, fd_main, fd_rows, check_gradients

CXX_PROGRAMS = {
    # std::sort of (double, key, pointer to a constant weight) tuples by key
    "sorted_tuples_with_pointers": r"""
#include <algorithm>
#include <tuple>
#include <vector>
static const double W[3] = {0.5, 1.5, -1.0};
double f(const double *x) {
  std::vector<std::tuple<double, int, const double *>> v;
  for (int i = 0; i < 9; i++) v.emplace_back(x[i % 4] * (i + 1), (i * 4) % 9, &W[i % 3]);
  std::sort(v.begin(), v.end(), [](const auto &a, const auto &b) { return std::get<1>(a) < std::get<1>(b); });
  double s = 0;
  int k = 1;
  for (auto &[d, key, w] : v) s += k++ * d * d * *w;
  return s;
}
""",
    # pairs of (pointer into the input, weight) sorted by weight: the pointers lead to active data
    "sorted_pairs_pointing_at_inputs": r"""
#include <algorithm>
#include <utility>
#include <vector>
double f(const double *x) {
  std::vector<std::pair<const double *, double>> v;
  for (int i = 0; i < 8; i++) v.push_back({&x[(i * 3) % 4], 0.25 * ((i * 5) % 8)});
  std::sort(v.begin(), v.end(), [](const auto &a, const auto &b) { return a.second < b.second; });
  double s = 0;
  for (int i = 0; i < 8; i++) s += (i + 1) * *v[i].first * *v[i].first * (1 + v[i].second);
  return s;
}
""",
}

C_PROGRAMS = {
    # records {uintptr_t handle, double w} on the heap, insertion-sorted by w
    "handles_insertion_sorted": r"""
typedef struct { uintptr_t at; double w; } rec;
__attribute__((noinline)) static void sort_recs(rec *r, int n) {
  for (int i = 1; i < n; i++) {
    rec t = r[i];
    int j = i - 1;
    while (j >= 0 && r[j].w > t.w) { r[j + 1] = r[j]; j--; }
    r[j + 1] = t;
  }
}
double f(const double *x) {
  rec *r = malloc(6 * sizeof(rec));
  for (int i = 0; i < 6; i++) { r[i].at = (uintptr_t)&x[(i + 1) % 4]; r[i].w = x[i % 4] * (6 - i); }
  sort_recs(r, 6);
  double s = 0;
  for (int i = 0; i < 6; i++) s += *(const double *)r[i].at * r[i].w * (i + 1);
  free(r);
  return s;
}
""",
}


# with AD before optimization, std::allocator's construct copies a pair in a helper of its
# own whose bytes nothing types: a clean refusal (never a wrong gradient)
MAY_REFUSE = {("sorted_pairs_pointing_at_inputs", "adbefore")}


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(CXX_PROGRAMS))
def test_cxx_integer_pointer_loads(tmp_path, name, level):
    flags, env = LEVELS[level]
    text = CXX_FD_HEAD + CXX_PROGRAMS[name] + CXX_FD_MAIN
    check_gradients(tmp_path, text, flags, env, cxx=True, agree=1e-9,
                    may_refuse="memcpy" if (name, level) in MAY_REFUSE else None)


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(C_PROGRAMS))
def test_c_integer_pointer_loads(tmp_path, name, level):
    flags, env = LEVELS[level]
    check_fd_rows(fd_rows(tmp_path, FD_HEAD + C_PROGRAMS[name] + fd_main(4), flags, env), 4, agree=1e-9)
