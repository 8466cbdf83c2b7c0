"""Containers of containers: memory whose pointers are merged with null.

The class: a `std::vector<std::vector<double>>` (a matrix as a vector of rows) filled from a
prototype row, grown row by row with `push_back`, or resized; and the same in C, rows
allocated only when not empty (`n ? malloc(...) : NULL`) and copied from a prototype. A
std::vector's storage is the null pointer until it is allocated, and an empty vector's end
is `null + 0`; the optimizer merges the two in phis. The element types of a memcpy (a row
copied from the prototype) were found through the roots of its pointers, and `null` was one
of them, shared with every other pointer merged with null -- here the rows' end pointers,
stored as pointers -- so the copied doubles looked like doubles and pointers at once, and
the build was refused ("a memcpy of mixed double/pointer"). Null is no memory: the roots of
a copy no longer include it (analysis/types.py, `_kinds_in`).

Each member is checked against central differences in reverse and forward mode at -O0,
-O2 and with AD before optimization. On the engine before, `fill_from_prototype` was refused
at -O0 and -O2; the other members already built.
"""
from __future__ import annotations

import pytest

from ad_helpers import CXX_FD_HEAD, CXX_FD_MAIN, FD_HEAD, LEVELS, check_fd_rows, fd_main, fd_rows

CXX_PROGRAMS = {
    # a matrix filled from a prototype row, rows read in a tanh layer (a small MLP)
    "fill_from_prototype": r"""
#include <vector>
static volatile int rows = 5, cols = 3;
double f(const double *x) {
  int m = rows, n = cols;
  std::vector<std::vector<double>> W(m, std::vector<double>(n));
  for (int i = 0; i < m; i++) for (int j = 0; j < n; j++) W[i][j] = 0.1 * (i + 1) * x[(i + j) % 4];
  double s = 0;
  for (int i = 0; i < m; i++) {
    double a = 0;
    for (int j = 0; j < n; j++) a += W[i][j] * x[j % 4];
    s += std::tanh(a) * x[(i + 1) % 4];
  }
  return s;
}
""",
    # rows pushed back one by one, then read
    "rows_pushed_back": r"""
#include <vector>
static volatile int rows = 6;
double f(const double *x) {
  std::vector<std::vector<double>> M;
  for (int i = 0; i < rows; i++) {
    std::vector<double> row(3);
    for (int j = 0; j < 3; j++) row[j] = x[(i + j) % 4] * (1 + 0.1 * j);
    M.push_back(row);
  }
  double s = 0;
  for (const auto &row : M) s += row[0] * row[1] + std::sin(row[2]);
  return s;
}
""",
    # resized rows, written in place, a row copied over another
    "resized_and_copied": r"""
#include <vector>
static volatile int rows = 4;
double f(const double *x) {
  std::vector<std::vector<double>> M(rows);
  for (auto &row : M) row.resize(4);
  for (size_t i = 0; i < M.size(); i++) for (int j = 0; j < 4; j++) M[i][j] = x[j] * (i + 1) + 0.1 * j;
  M[0] = M[M.size() - 1];
  double s = 0;
  for (const auto &row : M) for (double v : row) s += v * v;
  return s;
}
""",
}

C_PROGRAMS = {
    # rows allocated only when not empty and copied from a prototype row
    "rows_from_prototype": r"""
static volatile int rows = 5, cols = 3;
struct row { double *begin, *end; };
double f(const double *x) {
  int m = rows, n = cols;
  double *proto = n ? malloc(sizeof(double) * n) : NULL;
  for (int j = 0; j < n; j++) proto[j] = 0.5 * x[j % 4];
  struct row *R = malloc(sizeof(struct row) * m);
  for (int i = 0; i < m; i++) {
    R[i].begin = n ? malloc(sizeof(double) * n) : NULL;
    R[i].end = R[i].begin + n;
    if (n) memcpy(R[i].begin, proto, sizeof(double) * n);
  }
  double s = 0;
  for (int i = 0; i < m; i++)
    for (double *p = R[i].begin; p != R[i].end; p++) s += *p * x[(i + 1) % 4] + sin(*p * i);
  for (int i = 0; i < m; i++) free(R[i].begin);
  free(R); free(proto);
  return s;
}
""",
}


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(CXX_PROGRAMS))
def test_cxx_nested_vectors(name, level, tmp_path):
    flags, env = LEVELS[level]
    check_fd_rows(fd_rows(tmp_path, CXX_FD_HEAD + CXX_PROGRAMS[name] + CXX_FD_MAIN, flags, env, cxx=True), 4)


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(C_PROGRAMS))
def test_c_rows_merged_with_null(name, level, tmp_path):
    flags, env = LEVELS[level]
    check_fd_rows(fd_rows(tmp_path, FD_HEAD + C_PROGRAMS[name] + fd_main(4), flags, env), 4)
