"""`enzyme_nocache`, Enzyme's newer spelling of `enzyme_not_overwritten`: in split mode the
caller promises the memory behind the next argument is unchanged until __enzyme_reverse,
so the tape need not hold what is read from it. Enzyme's `ReverseMode/nocache_containers.cpp`
was refused ("unknown marker"); its shape, traversals of a std::vector, std::list and
std::forward_list (the caller builds the shadow containers), runs here at three levels.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ad_helpers import LEVELS

PROGRAM = r"""
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <list>
#include <forward_list>
extern int enzyme_nocache, enzyme_const;
template <typename RT, typename... Args> RT __enzyme_augmentfwd(Args...);
template <typename RT, typename... Args> RT __enzyme_reverse(Args...);
template <typename T> void g(T &y, T &x, T &c) {
  auto xi = x.begin(); auto yi = y.begin(); auto ci = c.begin();
  for (; xi != x.end(); ++xi, ++yi, ++ci) *yi = *ci * std::sin(*xi) * *xi;
}
template <typename T> __attribute__((noinline)) void *aug(T &y, T &yb, T &x, T &xb, T &c) {
  return __enzyme_augmentfwd<void *>(g<T>, enzyme_nocache, &y, &yb, enzyme_nocache, &x, &xb,
                                     enzyme_nocache, enzyme_const, &c);
}
template <typename T> __attribute__((noinline)) void rev(T &y, T &yb, T &x, T &xb, T &c, void *tape) {
  __enzyme_reverse<void>(g<T>, enzyme_nocache, &y, &yb, enzyme_nocache, &x, &xb, enzyme_nocache, enzyme_const, &c,
                         tape);
}
template <typename T> int check() {
  size_t n = 7;
  T x(n, 0.0), xb(n, 0.0), y(n, 0.0), yb(n, 1.0), c(n, 0.0);
  double i = 0;
  for (auto &v : x) v = 0.25 * i++;
  for (auto &v : c) v = i++;
  void *tape = aug<T>(y, yb, x, xb, c);
  rev<T>(y, yb, x, xb, c, tape);
  int bad = 0;
  auto xi = x.begin(); auto xbi = xb.begin(); auto yi = y.begin(); auto ybi = yb.begin(); auto ci = c.begin();
  for (; xi != x.end(); ++xi, ++xbi, ++yi, ++ybi, ++ci) {
    double want = *ci * (std::cos(*xi) * *xi + std::sin(*xi));
    bad |= std::fabs(*xbi - want) > 1e-12 || std::fabs(*yi - *ci * std::sin(*xi) * *xi) > 1e-12 || *ybi != 0;
  }
  return bad;
}
int main() {
  int bad = check<std::vector<double>>() | 2 * check<std::list<double>>() | 4 * check<std::forward_list<double>>();
  std::printf("bad %d\n", bad);
  return bad;
}
"""


@pytest.mark.parametrize("level", sorted(LEVELS))
def test_nocache_over_containers(level, tmp_path):
    flags, env = LEVELS[level]
    src, exe = tmp_path / "p.cc", tmp_path / "p"
    src.write_text(PROGRAM)
    cli = os.path.join(os.path.dirname(sys.executable), "enzyme-build")
    r = subprocess.run([cli, "c++", *flags, str(src), "-o", str(exe)], capture_output=True, text=True,
                       timeout=600, env={**os.environ, **env})
    assert r.returncode == 0, r.stderr
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "bad 0" in out.stdout, out.stdout + out.stderr
