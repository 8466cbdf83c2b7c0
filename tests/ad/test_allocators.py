"""Memory from every allocator C and C++ programs use, and from one the engine cannot know.

The class: active values copied into a buffer from `operator new(n, std::nothrow)`, its array
and aligned forms, `memalign`, `valloc` (std::stable_sort, std::inplace_merge and
std::stable_partition take their scratch buffer from the nothrow form through
std::get_temporary_buffer). Those allocators were not in the library table, so the buffer
had no shadow, and a plain copy into it (`buf[i] = x[i]`, a memcpy after optimization) lost
the derivative silently: gradients of zero at -O0 and -O2 (std::stable_sort: 19 of 20
components). They are allocators now, and a copy of floats from shadowed memory into memory
no shadow can follow is refused like a store of an active value there, in both modes (a
block from a routine the program only declares). Checked in reverse and forward mode against
central differences at -O0, -O2 and with AD before optimization.
"""
from __future__ import annotations

import pytest

from ad_helpers import CXX_FD_HEAD, CXX_FD_MAIN, LEVELS, check_fd_rows, fd_rows, right_or_refused

ALLOCATORS = {
    "nothrow_new": "::operator new(n * sizeof(double), std::nothrow)",
    "nothrow_array_new": "::operator new[](n * sizeof(double), std::nothrow)",
    "aligned_nothrow_new": "::operator new(n * sizeof(double), std::align_val_t(64), std::nothrow)",
    "aligned_new": "::operator new(n * sizeof(double), std::align_val_t(64))",
    "memalign": "memalign(64, n * sizeof(double))",
    "valloc": "valloc(n * sizeof(double))",
}
RELEASE = {"nothrow_new": "::operator delete(p, std::nothrow)", "nothrow_array_new": "::operator delete[](p, std::nothrow)",
           "aligned_nothrow_new": "::operator delete(p, std::align_val_t(64), std::nothrow)",
           "aligned_new": "::operator delete(p, std::align_val_t(64))", "memalign": "free(p)", "valloc": "free(p)"}

BUFFER = r"""
#include <cstdlib>
#include <malloc.h>
#include <new>
__attribute__((noinline)) static double *buffer(long n) { return static_cast<double *>(ALLOC); }
__attribute__((noinline)) static void release(double *p) { RELEASE; }
double f(const double *x) {
  double *buf = buffer(8);
  for (int i = 0; i < 8; i++) buf[i] = x[i % 4];
  double s = 0;
  for (int i = 0; i < 8; i++) s += (i + 1) * buf[i] * buf[(i + 3) % 8] + std::sin(buf[i]);
  release(buf);
  return s;
}
"""

SORTS = r"""
#include <algorithm>
#include <vector>
static volatile int N = 12;
double f(const double *x) {
  int n = N;
  std::vector<double> v;
  for (int i = 0; i < n; i++) v.push_back(x[i % 4] * (1 + 0.1 * i) + 0.7 * i * (i % 2 ? 1 : -1));
  std::stable_sort(v.begin(), v.end());
  std::stable_partition(v.begin(), v.end(), [](double a) { return a > 0; });
  std::inplace_merge(v.begin(), v.begin() + n / 2, v.end());
  double s = 0;
  for (int i = 0; i < n; i++) s += (i + 1) * v[i] + 0.01 * v[i] * v[i];
  return s;
}
"""

# a block from a routine the engine does not know (mmap): no shadow can follow what is copied
# there, so the build is refused instead of dropping the derivative
UNKNOWN = r"""
#include <sys/mman.h>
double f(const double *x) {
  double *buf = static_cast<double *>(mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  for (int i = 0; i < 4; i++) buf[i] = x[i];
  double s = 0;
  for (int i = 0; i < 4; i++) s += buf[i] * buf[(i + 1) % 4];
  munmap(buf, 4096);
  return s;
}
"""


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(ALLOCATORS))
def test_allocated_buffers(name, level, tmp_path):
    flags, env = LEVELS[level]
    text = CXX_FD_HEAD + BUFFER.replace("ALLOC", ALLOCATORS[name]).replace("RELEASE", RELEASE[name]) + CXX_FD_MAIN
    check_fd_rows(fd_rows(tmp_path, text, flags, env, cxx=True), 4)


@pytest.mark.parametrize("level", ["O0", "O2"])
def test_temporary_buffer_algorithms(level, tmp_path):
    flags, env = LEVELS[level]
    check_fd_rows(fd_rows(tmp_path, CXX_FD_HEAD + SORTS + CXX_FD_MAIN, [*flags, "-Wno-deprecated-declarations"],
                          env, cxx=True), 4)


@pytest.mark.parametrize("level", sorted(LEVELS))
def test_unknown_allocator_refused(level, tmp_path):
    flags, env = LEVELS[level]
    stderr = right_or_refused(tmp_path, CXX_FD_HEAD + UNKNOWN + CXX_FD_MAIN, flags, env, cxx=True)
    assert stderr is not None and ("cannot give the memory a shadow" in stderr or "mmap" in stderr), stderr
