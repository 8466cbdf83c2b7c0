"""Loops given integer counters before AD (ad/counters.py).

Pointer walks (`counted_pointer_loops`). The class: every loop whose induction variable is a
pointer stepped by a constant and tested against an end pointer -- C++ range-for over a
`std::vector`, `std::accumulate`, `std::max_element`, `std::inner_product`, `std::transform`
over two ranges, an array of structs walked by reference, C's `for (p = a; p != a + n; p++)`,
`p < end`, and a walk downwards (`for (p = a + n; p != a;) { --p; ... }`). Before the
rewrite, the reverse sweep of such a loop took every value it needed from a record pushed per
iteration, with the iteration's shadow pointer, and the tape's capacity was checked every
iteration; the loop had no trip count for the cache planner. Each member is checked against
central differences in reverse and forward mode at -O0, -O2 and with AD before optimization;
at -O2 the cache plan of each keeps no record per block execution (every loop's records are
static: its count is known on entry). IR tests check the rewrite itself: the shapes it
counts, what it leaves alone, and that the result passes LLVM's verifier.

Lagging IVs (`lagging_ivs`): a header phi holding the previous iteration's value of an IV
(`i` kept as the last `j = i + 1`) becomes `j - step`; IR tests here, and the C++ stencil
over `std::vector` buffers in test_snapshots.py, whose three neighbours are only seen as
re-reads of the same elements (a snapshot) with it.
"""
from __future__ import annotations

import pytest

from ad_helpers import (CXX_FD_HEAD, CXX_FD_MAIN, FD_HEAD, LEVELS, cache_plan, check_fd_rows, fd_main,
                        fd_rows, verified)
from enzyme_build.ad.counters import counted_pointer_loops, lagging_ivs

# n comes from a volatile so the trip counts are unknown and values must be kept
C_PRELUDE = "static volatile int count = 37;\n"
CXX_PRELUDE = "#include <vector>\n#include <numeric>\n#include <algorithm>\nstatic volatile int count = 37;\n"

C_PROGRAMS = {
    # `!=` walks up and down and a `<` walk, over a malloc'd array
    "c_walks": C_PRELUDE + r"""
double f(const double *x) {
  int n = count;
  double *a = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) a[i] = x[i % 4] * (1 + 0.01 * i);
  double s = 0;
  for (const double *p = a; p != a + n; ++p) s += *p * sin(*p);
  for (double *p = a; p < a + n; p++) *p = *p * *p * x[1];
  for (double *p = a + n; p != a;) { --p; s += *p * cos(*p + s * 0.01); }
  free(a);
  return s;
}
""",
    # rows of a matrix walked by a row pointer, elements by an element pointer (a nest)
    "c_nested_rows": C_PRELUDE + r"""
double f(const double *x) {
  int n = count, m = 6;
  double *A = malloc(sizeof(double) * n * m);
  for (int k = 0; k < n * m; k++) A[k] = x[k % 4] * (1 + 0.001 * k);
  double s = 0;
  for (double *row = A; row != A + n * m; row += m) {
    double r = 0;
    for (double *e = row; e != row + m; e++) r += exp(0.1 * *e) * x[2];
    s += log(r) * row[0];
  }
  free(A);
  return s;
}
""",
}

CXX_PROGRAMS = {
    # range-for reads and in-place updates of a std::vector
    "range_for": CXX_PRELUDE + r"""
double f(const double *x) {
  std::vector<double> v(count);
  for (size_t i = 0; i < v.size(); i++) v[i] = x[i % 4] * (1 + 0.02 * i);
  for (double &e : v) e = e * e * x[0] + std::sin(e);
  double s = 0;
  for (const double &e : v) s += e * std::cos(e * x[3]);
  return s;
}
""",
    # a log-sum-exp through std::max_element and std::accumulate with a lambda (the C++ GMM)
    "logsumexp_algorithms": CXX_PRELUDE + r"""
static double logsumexp(const std::vector<double> &v) {
  double mx = *std::max_element(v.begin(), v.end());
  double s = std::accumulate(v.begin(), v.end(), 0.0, [mx](double acc, double t) { return acc + std::exp(t - mx); });
  return std::log(s) + mx;
}
double f(const double *x) {
  std::vector<double> v(count), w(count);
  double total = 0;
  for (int rep = 0; rep < 5; rep++) {
    for (size_t i = 0; i < v.size(); i++) v[i] = x[(i + rep) % 4] * std::sin(0.3 * i + rep);
    total += logsumexp(v);
  }
  return total;
}
""",
    # two ranges walked side by side: std::transform, then std::inner_product
    "transform_two_ranges": CXX_PRELUDE + r"""
double f(const double *x) {
  std::vector<double> a(count), b(count), c(count);
  for (size_t i = 0; i < a.size(); i++) { a[i] = x[i % 4] + 0.1 * i; b[i] = x[(i + 1) % 4] * 0.5; }
  std::transform(a.begin(), a.end(), b.begin(), c.begin(), [](double p, double q) { return p * std::exp(-q * q); });
  return std::inner_product(c.begin(), c.end(), a.begin(), 0.0);
}
""",
    # an array of structs walked by reference (a 32-byte step)
    "struct_stride": CXX_PRELUDE + r"""
struct Body { double x, y, z, m; };
double f(const double *x) {
  std::vector<Body> bodies(count);
  int i = 0;
  for (Body &b : bodies) { b = {x[i % 4], x[(i + 1) % 4] * 0.5, 0.1 * i, 1.0 + 0.01 * i}; i++; }
  double e = 0;
  for (const Body &b : bodies) e += b.m * std::sqrt(b.x * b.x + b.y * b.y + b.z * b.z + 0.1);
  return e;
}
""",
}


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(C_PROGRAMS))
def test_c_pointer_walks(name, level, tmp_path):
    flags, env = LEVELS[level]
    check_fd_rows(fd_rows(tmp_path, FD_HEAD + C_PROGRAMS[name] + fd_main(4), flags, env), 4)


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(CXX_PROGRAMS))
def test_cxx_pointer_walks(name, level, tmp_path):
    flags, env = LEVELS[level]
    check_fd_rows(fd_rows(tmp_path, CXX_FD_HEAD + CXX_PROGRAMS[name] + CXX_FD_MAIN, flags, env, cxx=True), 4)


@pytest.mark.parametrize("name", sorted(C_PROGRAMS) + sorted(CXX_PROGRAMS))
def test_walks_keep_static_records(name, tmp_path):
    """At -O2 no record is pushed per block execution: every walk has a count on entry."""
    cxx = name in CXX_PROGRAMS
    plan = cache_plan(tmp_path, CXX_FD_HEAD + CXX_PROGRAMS[name] + CXX_FD_MAIN if cxx
                      else FD_HEAD + C_PROGRAMS[name] + fd_main(4), cxx=cxx)
    assert "static record of loop" in plan, plan
    assert "per execution of block" not in plan, plan


WALK = r"""
define double @g(ptr %a, i64 %n) {
entry:
  %end = getelementptr inbounds double, ptr %a, i64 %n
  %empty = icmp eq i64 %n, 0
  br i1 %empty, label %exit, label %loop
loop:
  %p = phi ptr [ %a, %entry ], [ %p.next, %loop ]
  %q = phi ptr [ %a, %entry ], [ %q.next, %loop ]
  %s = phi double [ 0.0, %entry ], [ %s1, %loop ]
  %x = load double, ptr %p, align 8
  %y = load double, ptr %q, align 8
  %t = fmul double %x, %y
  %s1 = fadd double %s, %t
  %p.next = getelementptr inbounds nuw i8, ptr %p, i64 8
  %q.next = getelementptr inbounds double, ptr %q, i64 -1
  %done = icmp TEST ptr %p.next, %end
  br i1 %done, label %BRANCH
exit:
  %r = phi double [ 0.0, %entry ], [ %s1, %loop ]
  ret double %r
}
"""


def walk_ir(test: str, exit_on_true: bool = True) -> str:
    branch = "exit, label %loop" if exit_on_true else "loop, label %exit"
    return WALK.replace("TEST", test).replace("BRANCH", branch)


@pytest.mark.parametrize("test,exit_on_true,count", [
    ("eq", True, "sdiv exact i64 %p.walkbytes, 8"),
    ("ne", False, "sdiv exact i64 %p.walkbytes, 8"),
    ("ult", False, "call i64 @llvm.smax.i64(i64 %p.walkrounded, i64 1)"),
    ("uge", True, "call i64 @llvm.smax.i64(i64 %p.walkrounded, i64 1)"),
])
def test_rewrite_counts_the_walk(test, exit_on_true, count):
    out = counted_pointer_loops(walk_ir(test, exit_on_true))
    verified(out)
    assert f"%p.walktrips = {count}" in out, out
    assert "%p.walkcount = phi i64 [ 0, %entry ], [ %p.walknext, %loop ]" in out
    # both pointers stepped by a constant become begin + k * step; the phis are gone
    assert "%p = getelementptr inbounds i8, ptr %a, i64 %p.walkoffset" in out
    assert "%q = getelementptr inbounds i8, ptr %a, i64 %q.walkoffset" in out
    assert "%q.walkoffset = mul nsw i64 %p.walkcount, -8" in out
    assert "phi ptr" not in out
    assert f"%done = icmp {'eq' if exit_on_true else 'ne'} i64 %p.walknext, %p.walktrips" in out


@pytest.mark.parametrize("test,exit_on_true", [
    ("ult", True),      # leaves while below the end: not a walk to the end
    ("ugt", False),     # an upward walk tested with `>`
    ("ule", False),     # runs one step past the end
])
def test_rewrite_leaves_other_tests_alone(test, exit_on_true):
    text = walk_ir(test, exit_on_true)
    assert counted_pointer_loops(text) == text


def test_rewrite_leaves_a_loop_variant_end_alone():
    text = walk_ir("eq").replace("%done = icmp eq ptr %p.next, %end", "%done = icmp eq ptr %p.next, %q")
    assert counted_pointer_loops(text) == text


def test_rewrite_counts_a_walk_over_a_global_array():
    """Start and end as a global and a constant expression over it (a global array's end)."""
    text = "@arr = global [40 x double] zeroinitializer\n" + walk_ir("eq").replace(
        "[ %a, %entry ], [ %p.next", "[ @arr, %entry ], [ %p.next").replace(
        "icmp eq ptr %p.next, %end", "icmp eq ptr %p.next, getelementptr inbounds (i8, ptr @arr, i64 320)")
    out = counted_pointer_loops(text)
    verified(out)
    assert "%p.walkend = ptrtoint ptr getelementptr inbounds (i8, ptr @arr, i64 320) to i64" in out, out
    assert "%p = getelementptr inbounds i8, ptr @arr, i64 %p.walkoffset" in out


def test_rewrite_leaves_a_walk_ending_at_null_alone():
    text = walk_ir("eq").replace("icmp eq ptr %p.next, %end", "icmp eq ptr %p.next, null")
    assert counted_pointer_loops(text) == text


# i = the previous iteration's j, where j = i + 1 is the IV the optimizer kept
LAGGING = r"""
define double @h(ptr %u, i64 %n, i64 %a) {
entry:
  %a1 = add i64 %a, 1
  br label %loop
loop:
  %j = phi i64 [ START_J, %entry ], [ %j1, %loop ]
  %i = phi i64 [ START_I, %entry ], [ %j, %loop ]
  %s = phi double [ 0.0, %entry ], [ %s1, %loop ]
  %pa = getelementptr double, ptr %u, i64 %i
  %x = load double, ptr %pa, align 8
  %pb = getelementptr double, ptr %u, i64 %j
  %y = load double, ptr %pb, align 8
  %t = fmul double %x, %y
  %s1 = fadd double %s, %t
  %j1 = add nuw nsw i64 %j, 1
  %done = icmp eq i64 %j1, %n
  br i1 %done, label %exit, label %loop
exit:
  ret double %s1
}
"""


@pytest.mark.parametrize("start_i,start_j", [("1", "2"), ("%a", "%a1")])
def test_a_lagging_phi_becomes_the_iv_minus_its_step(start_i, start_j):
    out = lagging_ivs(LAGGING.replace("START_I", start_i).replace("START_J", start_j))
    verified(out)
    assert "%i = phi" not in out
    assert "  %i = add nsw i64 %j, -1" in out, out


@pytest.mark.parametrize("start_i,start_j", [("5", "2"), ("%a1", "%a"), ("%n", "%a1")])
def test_a_phi_not_one_step_behind_is_left_alone(start_i, start_j):
    text = LAGGING.replace("START_I", start_i).replace("START_J", start_j)
    assert lagging_ivs(text) == text
