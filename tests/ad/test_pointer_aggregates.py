"""Pointers returned inside a struct by value (enzyme_build/ad/boundaries.py).

The class: a function that is not inlined returns a small struct holding a pointer into
its arguments' memory — a span `{double *p; long n;}`, a pair of pointers, an iterator
range, `std::pair<double*, double*>`. x86-64 returns it in two registers, and the IR
result is an aggregate such as `{ ptr, i64 }`. The engine gives a returned pointer a
shadow only when it is the whole result, so loads through the pointer inside the struct
carried no derivative: a silent zero gradient at -O2 (at -O0 the pre-AD pipeline inlined
the helper, hiding it). The stage now inlines such functions into their callers before
differentiation; what cannot be inlined (a recursive function) is a clear error naming the
function and the load, never a silent zero. Every program is checked in reverse and forward
mode against central differences at -O0, -O2 and with AD before optimization.
"""
from __future__ import annotations

import pytest

from ad_helpers import CXX_FD_HEAD, CXX_FD_MAIN, FD_HEAD, LEVELS, check_fd_rows, fd_main, fd_rows

MAIN = fd_main()

PROGRAMS = {
    # { ptr, i64 }: a span into the argument
    "span": r"""
typedef struct { const double *p; long n; } span;
__attribute__((noinline)) static span middle(const double *x, long n) { span s = { x + 1, n - 2 }; return s; }
__attribute__((noinline)) double f(const double *x) {
  span s = middle(x, 4);
  double r = 0;
  for (long i = 0; i < s.n; i++) r += s.p[i] * s.p[i] * x[0];
  return r + x[3];
}""",
    # { ptr, ptr }: two pointers into the same array, read in one loop
    "pointer_pair": r"""
typedef struct { const double *a, *b; } two;
__attribute__((noinline)) static two halves(const double *x, long n) { two t = { x, x + n / 2 }; return t; }
__attribute__((noinline)) double f(const double *x) {
  two t = halves(x, 4);
  double r = 0;
  for (int i = 0; i < 2; i++) r += sin(t.a[i]) * t.b[i];
  return r;
}""",
    # a writable span: the helper's result is written through, then read back
    "writable_span": r"""
typedef struct { double *p; long n; } span;
__attribute__((noinline)) static span tail(double *x, long n, long k) { span s = { x + k, n - k }; return s; }
__attribute__((noinline)) double f(const double *x) {
  double w[4];
  for (int i = 0; i < 4; i++) w[i] = x[i] * x[i];
  span s = tail(w, 4, 1);
  for (long i = 0; i < s.n; i++) s.p[i] *= x[0];
  return w[0] + w[1] + w[2] * w[3];
}""",
    # a pointer next to a double: { ptr, double }
    "pointer_and_weight": r"""
typedef struct { const double *p; double w; } weighted;
__attribute__((noinline)) static weighted pick(const double *x, int i, double w) { weighted r = { x + i, w * 2 }; return r; }
__attribute__((noinline)) double f(const double *x) {
  weighted a = pick(x, 2, x[1]);
  weighted b = pick(x, 0, x[3]);
  return a.p[0] * a.w + b.p[1] * b.w * b.p[0];
}""",
    # the aggregate passes through a forwarding helper before it is used
    "forwarded_span": r"""
typedef struct { const double *p; long n; } span;
__attribute__((noinline)) static span all(const double *x, long n) { span s = { x, n }; return s; }
__attribute__((noinline)) static span drop_first(span s) { span r = { s.p + 1, s.n - 1 }; return r; }
__attribute__((noinline)) double f(const double *x) {
  span s = drop_first(all(x, 4));
  double r = 1;
  for (long i = 0; i < s.n; i++) r *= s.p[i] + 2;
  return r * x[0];
}""",
}


@pytest.mark.parametrize("level", list(LEVELS))
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_pointer_in_returned_struct(tmp_path, name, level):
    flags, env = LEVELS[level]
    check_fd_rows(fd_rows(tmp_path, FD_HEAD + PROGRAMS[name] + MAIN, flags, env), 4)


CXX_PAIR = CXX_FD_HEAD + r"""
struct Row {
  double *data; long n;
  __attribute__((noinline)) std::pair<double *, double *> range() const { return {data, data + n}; }
};
__attribute__((noinline)) double f(const double *x) {
  double w[4];
  for (int i = 0; i < 4; i++) w[i] = std::exp(x[i] * 0.5);
  Row r{w, 4};
  auto [b, e] = r.range();
  double s = 0;
  for (double *p = b; p != e; ++p) s += *p * *p;
  return s;
}
""" + CXX_FD_MAIN


@pytest.mark.parametrize("level", list(LEVELS))
def test_std_pair_of_pointers(tmp_path, level):
    flags, env = LEVELS[level]
    check_fd_rows(fd_rows(tmp_path, CXX_PAIR, flags, env, cxx=True), 4)


RECURSIVE = FD_HEAD + r"""
typedef struct { const double *p; long n; } span;
__attribute__((noinline)) static span drop(const double *x, long n, int k) {
  if (k == 0) { span s = { x, n }; return s; }
  span r = drop(x + 1, n - 1, k - 1);
  if (r.n > 100) printf("long\n");
  return r;
}
__attribute__((noinline)) double f(const double *x) {
  span s = drop(x, 4, 2);
  double r = 0;
  for (long i = 0; i < s.n; i++) r += s.p[i] * s.p[i];
  return r;
}
"""
FORWARD_ONLY_MAIN = r"""
int main(void) {
  double x[4] = {0.5, -1.25, 1.5, 0.75}, e[4] = {1, 0, 0, 0};
  printf("%g\n", __enzyme_fwddiff((void *)f, enzyme_dup, x, e));
  return 0;
}
"""


@pytest.mark.parametrize("level", ["O0", "O2"])
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_recursive_function_returning_a_span_is_refused(tmp_path, level, mode):
    """A recursive function cannot be inlined: the load through its span is refused, naming
    the function and the source line, in both modes (never a zero gradient)."""
    import os
    import subprocess
    import sys
    flags, env = LEVELS[level]
    src = tmp_path / "p.c"
    src.write_text(RECURSIVE + (MAIN if mode == "reverse" else FORWARD_ONLY_MAIN))
    cli = os.path.join(os.path.dirname(sys.executable), "enzyme-build")
    r = subprocess.run([cli, "cc", "-g", *flags, str(src), "-o", str(tmp_path / "p"), "-lm"],
                       capture_output=True, text=True, timeout=300, env={**os.environ, **env})
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr
    assert "@drop returns inside a struct" in r.stderr and "p.c:" in r.stderr, r.stderr
    assert ("derivative would be lost" if mode == "reverse" else "tangent would be lost") in r.stderr
    assert not (tmp_path / "p").exists()
