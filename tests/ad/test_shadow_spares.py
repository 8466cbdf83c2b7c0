"""Large shadow blocks come back from the thread's spares (ad/tape.py,
`__enzyme_build_shadow_alloc` / `__enzyme_build_shadow_free`).

The class: objectives that allocate large scratch arrays (malloc, calloc, realloc) on every
call. Their shadows are released to a per-thread set of spare blocks instead of the heap, so
that a gradient called in a loop does not shrink and regrow the heap on each call. What must
hold whatever the sizes: a reused block is zeroed again, a block too small (or much too
large) is not reused, growth by realloc keeps its adjoints, and two threads never share a
block. Each program calls the gradient at a sequence of sizes (equal, smaller, larger) and
checks every call against forward mode and central differences.
"""
from __future__ import annotations

import pytest

from ad_helpers import FD_HEAD, LEVELS, check_fd_rows, fd_rows

OBJECTIVE = r"""
static THREAD_LOCAL int N = 20000;
/* scratch arrays of N doubles (160 KB at 20000): malloc, calloc, and a realloc that doubles
   a block, all freed before returning */
__attribute__((noinline)) double f(const double *x) {
  int n = N;
  double *a = malloc(sizeof(double) * n);
  double *b = calloc(n, sizeof(double));
  for (int i = 0; i < n; i++) a[i] = x[i % 4] * (1.0 + 1e-4 * i);
  for (int i = 1; i < n; i++) b[i] = b[i - 1] * 0.5 + sin(a[i]);
  double *c = malloc(sizeof(double) * (n / 2));
  for (int i = 0; i < n / 2; i++) c[i] = a[2 * i] * b[i];
  c = realloc(c, sizeof(double) * n);
  for (int i = n / 2; i < n; i++) c[i] = cos(b[i]) * x[(i + 1) % 4];
  double s = 0;
  for (int i = 0; i < n; i++) s += c[i] * c[i] * 1e-4;
  free(a); free(b); free(c);
  return s;
}
static const int SIZES[] = {20000, 20000, 9000, 30000, 20000, 5000, 40000, 20000};
#define CALLS ((int)(sizeof SIZES / sizeof SIZES[0]))
"""

SEQUENTIAL_MAIN = r"""
int main(void) {
  double x[4] = {0.5, -1.25, 1.5, 0.75};
  for (int k = 0; k < CALLS; k++) {
    N = SIZES[k];
    double g[4] = {0};
    __enzyme_autodiff((void *)f, enzyme_dup, x, g);
    for (int i = 0; i < 4; i++) {
      double e[4] = {0}, xp[4], xm[4];
      e[i] = 1;
      for (int j = 0; j < 4; j++) { xp[j] = x[j]; xm[j] = x[j]; }
      xp[i] += 1e-6; xm[i] -= 1e-6;
      printf("%.15g %.15g %.15g\n", g[i], __enzyme_fwddiff((void *)f, enzyme_dup, x, e), (f(xp) - f(xm)) / 2e-6);
    }
  }
  return 0;
}
"""


@pytest.mark.parametrize("config", sorted(LEVELS))
def test_gradients_of_repeated_large_scratch_arrays(tmp_path, config):
    flags, env = LEVELS[config]
    rows = fd_rows(tmp_path, FD_HEAD + "#define THREAD_LOCAL\n" + OBJECTIVE + SEQUENTIAL_MAIN, flags, env)
    check_fd_rows(rows, 4 * 8)
    # the same size gives the same gradient whether its blocks are fresh or reused
    first, again = rows[0:4], rows[4:8]
    assert [r[0] for r in first] == [r[0] for r in again]


THREADS_MAIN = r"""
#include <pthread.h>
static double expected[CALLS][4];
static int failures;
/* both threads run gradients at the same time, each at its own sequence of sizes (N is
   thread-local) */
static void *worker(void *arg) {
  int offset = *(int *)arg;
  double x[4] = {0.5, -1.25, 1.5, 0.75};
  for (int round = 0; round < 6; round++)
    for (int k0 = 0; k0 < CALLS; k0++) {
      int k = (k0 + offset) % CALLS;
      double g[4] = {0};
      N = SIZES[k];
      __enzyme_autodiff((void *)f, enzyme_dup, x, g);
      for (int i = 0; i < 4; i++)
        if (g[i] != expected[k][i]) __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
    }
  return NULL;
}
int main(void) {
  double x[4] = {0.5, -1.25, 1.5, 0.75};
  for (int k = 0; k < CALLS; k++) {
    N = SIZES[k];
    __enzyme_autodiff((void *)f, enzyme_dup, x, expected[k]);
  }
  pthread_t t[2];
  int offsets[2] = {0, 3};
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, &offsets[i]);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  printf("%d %d %d\n", failures, failures, failures);
  return 0;
}
"""


def test_two_threads_keep_their_own_spare_blocks(tmp_path):
    """Each thread's spares are its own (thread_local): gradients computed on two threads at
    once, at different sizes, equal those of the same sizes computed alone."""
    rows = fd_rows(tmp_path, FD_HEAD + "#define THREAD_LOCAL __thread\n" + OBJECTIVE + THREADS_MAIN, ("-O2",),
                   extra=("-pthread",))
    assert rows == [[0.0, 0.0, 0.0]]


# counts the program's large mallocs (64 KiB and up): linked into the program ahead of libc,
# its malloc is the one every call of the program and of its derived code reaches
COUNTER = r"""
#include <stddef.h>
void *__libc_malloc(size_t);
static long large;
void *malloc(size_t n) {
  if (n >= 65536) __atomic_add_fetch(&large, 1, __ATOMIC_RELAXED);
  return __libc_malloc(n);
}
long large_mallocs(void) { return __atomic_load_n(&large, __ATOMIC_RELAXED); }
"""

COUNTED_MAIN = r"""
long large_mallocs(void);
int main(void) {
  double x[4] = {0.5, -1.25, 1.5, 0.75}, g[4] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, g);
  long before = large_mallocs();
  for (int k = 0; k < 5; k++) __enzyme_autodiff((void *)f, enzyme_dup, x, g);
  long primal = large_mallocs();
  volatile double sink = 0;
  for (int k = 0; k < 5; k++) sink += f(x);
  printf("%ld %ld %ld\n", primal - before, large_mallocs() - primal, (long)0);
  return 0;
}
"""


def test_large_shadow_blocks_are_reused_across_calls(tmp_path):
    """After the first gradient call, further calls at the same size take their shadow blocks
    from the spares: they make exactly the primal's own large mallocs (a: malloc'd; b:
    calloc'd; c: malloc'd, then grown by realloc), none for shadows."""
    import shutil
    import subprocess
    cc = shutil.which("clang-22") or shutil.which("cc")
    if cc is None:
        pytest.skip("needs a C compiler for the counting malloc")
    (tmp_path / "count.c").write_text(COUNTER)
    subprocess.run([cc, "-O2", "-shared", "-fPIC", str(tmp_path / "count.c"), "-o", str(tmp_path / "libcount.so")],
                   check=True, capture_output=True)
    rows = fd_rows(tmp_path, FD_HEAD + "#define THREAD_LOCAL\n" + OBJECTIVE + COUNTED_MAIN, ("-O2",),
                   extra=(f"-L{tmp_path}", "-lcount", f"-Wl,-rpath,{tmp_path}"))
    gradients, primals, _ = rows[0]
    assert primals == 5 * 2, rows      # the counter sees the primal's mallocs of a and c
    assert gradients == primals, rows  # and the gradient's calls no more than those


def test_the_spares_are_per_thread():
    from enzyme_build.ad.tape import _SUPPORT
    assert "internal thread_local global" in _SUPPORT["__enzyme_build_shadow_spare"]
