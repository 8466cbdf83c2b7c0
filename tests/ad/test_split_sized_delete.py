"""Split pieces that free the function's own `new`'d blocks at the end of the reverse piece.

The class: a block the function allocates with `new` (std::vector's storage, `new[]`, a
std::unique_ptr<double[]>, a small matrix class) and reads in a loop after its last write is
read again by the reverse piece, which frees it at its end (`cache._final_after`,
`deferred_frees`). libstdc++ frees with the sized `operator delete(void *, size_t)`: the
reverse piece passed the pointer it fetched from the frame record but the size as the
augmented piece's value, undefined in the reverse piece (invalid IR, an internal error).
Members: a table in a std::vector, `new[]` with an explicit sized delete, a
std::unique_ptr<double[]>, a matrix class holding a std::vector, two std::vectors swapped
every step (the pointer freed is merged in the loop: the reverse piece fetches it in the
reverse of the free's block, where it is final, not of the entry block), and one built with
-fno-exceptions (`new` called rather than invoked). Each is built in split mode
(`__enzyme_augmentfwd` then `__enzyme_reverse`) and checked against combined mode and
central differences, at -O2, -O3 and with AD before optimization.
"""
from __future__ import annotations

import pytest

from ad_helpers import built_and_run

HEAD = r"""
#include <cmath>
#include <cstdio>
#include <memory>
#include <new>
#include <vector>
extern int enzyme_dup;
extern "C" void __enzyme_autodiff(void *, ...);
extern "C" void *__enzyme_augmentfwd(void *, ...);
extern "C" void __enzyme_reverse(void *, ...);
static volatile int dim = 6;
"""

MAIN = r"""
int main() {
  double x[4] = {0.5, -1.25, 1.5, 0.75}, g[4] = {0}, s[4] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, g);
  void *tape = __enzyme_augmentfwd((void *)f, enzyme_dup, x, s);
  __enzyme_reverse((void *)f, enzyme_dup, x, s, 1.0, tape);
  for (int i = 0; i < 4; i++) {
    double xp[4], xm[4];
    for (int k = 0; k < 4; k++) { xp[k] = x[k]; xm[k] = x[k]; }
    xp[i] += 1e-6; xm[i] -= 1e-6;
    std::printf("%.15g %.15g %.15g\n", s[i], g[i], (f(xp) - f(xm)) / 2e-6);
  }
}
"""

PROGRAMS = {
    "vector_table": r"""
__attribute__((noinline)) double f(const double *x) {
  const int n = dim;
  std::vector<double> t(n);
  for (int i = 0; i < n; i++) t[i] = std::sin(x[i % 4]) + 0.1 * i;
  double s = 0;
  for (int r = 0; r < 3; r++)
    for (int i = 0; i < n; i++) s += t[i] * t[(i + r) % n] * x[r];
  return s;
}""",
    "sized_delete": r"""
__attribute__((noinline)) double f(const double *x) {
  const int n = dim;
  double *t = static_cast<double *>(::operator new(n * sizeof(double)));
  for (int i = 0; i < n; i++) t[i] = std::exp(0.3 * x[i % 4]) * (i + 1);
  double s = 0;
  for (int r = 0; r < 3; r++)
    for (int i = 0; i < n; i++) s += t[i] * x[(i + r) % 4];
  ::operator delete(t, n * sizeof(double));
  return s;
}""",
    "swapped_vectors": r"""
__attribute__((noinline)) double f(const double *x) {
  const int n = dim;
  std::vector<double> u(n), next(n);
  for (int i = 0; i < n; i++) u[i] = x[i % 4] * (1.0 + 0.1 * i);
  for (int step = 0; step < 3; step++) {
    for (int i = 0; i < n; i++) next[i] = u[i] + 0.2 * std::sin(u[(i + 1) % n]);
    std::swap(u, next);
  }
  double s = 0;
  for (int i = 0; i < n; i++) s += u[i] * u[i];
  return s;
}""",
    "unique_array": r"""
__attribute__((noinline)) double f(const double *x) {
  const int n = dim;
  std::unique_ptr<double[]> t(new double[n]);
  for (int i = 0; i < n; i++) t[i] = x[i % 4] * x[(i + 1) % 4];
  double s = 0;
  for (int r = 0; r < 3; r++)
    for (int i = 0; i < n; i++) s += std::cos(t[i]) * x[r];
  return s;
}""",
    "matrix_class": r"""
class Matrix {
 public:
  Matrix(int r, int c) : c_(c), d_(size_t(r) * c) {}
  double &operator()(int i, int j) { return d_[size_t(i) * c_ + j]; }
 private:
  int c_;
  std::vector<double> d_;
};
__attribute__((noinline)) double f(const double *x) {
  const int n = dim;
  Matrix q(2, n);
  std::vector<double> row(n);
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < n; i++) q(k, i) = std::exp(0.2 * x[(i + k) % 4]);
  double s = 0;
  for (int p = 0; p < 3; p++)
    for (int k = 0; k < 2; k++) {
      for (int i = 0; i < n; i++) row[i] = q(k, i) * (x[p] - 0.1 * i);
      for (int i = 0; i < n; i++) s += row[i] * row[i];
    }
  return s;
}""",
}


@pytest.mark.parametrize("opt", ["-O2", "-O3", "adbefore"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_split_frees_new_blocks(tmp_path, name, opt):
    if opt == "adbefore":
        check(tmp_path, PROGRAMS[name], ["-O2"], {"ENZYME_BUILD_AD_BEFORE_OPT": "1"})
    else:
        check(tmp_path, PROGRAMS[name], [opt])


def test_split_frees_new_blocks_without_exceptions(tmp_path):
    check(tmp_path, PROGRAMS["vector_table"], ["-O2", "-fno-exceptions"])


def check(workdir, program: str, flags: list[str], env=None) -> None:
    out = built_and_run(workdir, HEAD + program + MAIN, flags, env, cxx=True)
    assert out.returncode == 0, out.stderr
    rows = [[float(v) for v in line.split()] for line in out.stdout.splitlines()]
    assert len(rows) == 4, out.stdout
    for split, combined, fd in rows:
        assert split == pytest.approx(combined, rel=1e-12, abs=1e-12), rows
        assert split == pytest.approx(fd, rel=1e-5, abs=1e-5), rows
    assert any(abs(r[0]) > 1e-3 for r in rows), rows
