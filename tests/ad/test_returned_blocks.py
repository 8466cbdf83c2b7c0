"""Memory a function allocates, fills by memcpy and returns, typed by what its callers do
with it. The class: C objects with an integer header and the data after it in one block
(`typedef struct {size_t n, dim;} Hdr;` followed by n doubles: tinyspline's splines,
many small matrix and vector libraries), made by a constructor and duplicated by a copy
function, each a `memcpy` whose bytes only the callers read as doubles.

Before, the memory type analysis did not look across a returned pointer: a copy into a
fresh block at offset 16 was taken for a std::string's characters (offset 16 is where
libstdc++ keeps a short string's buffer) and its derivative dropped — gradient 0 at -O2,
silently — and a copy at offset 0 was refused as "data of unknown type". With AD before
optimization, a header read through an accessor (`data(h)` returning `h + 1`) left only
the header's integer evidence on a variable-length copy, and half the gradient was lost.
Now the analysis carries facts between a function's returned block and its callers' use
of the call's result, follows calls that return an argument moved by a constant
(analysis/memtypes.py), and offset 16 is a string's buffer only where the program stores
it into, or compares it with, the string's data pointer (analysis/types.py).

Each program checks reverse and forward derivatives against central differences at -O0,
-O2 and with AD before optimization.
"""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from hcheck_run import ENZYME_BUILD, HCHECK, build_and_run_hcheck, checks_passed, loss_check_main

CONFIGS = [("-O0", {}), ("-O2", {}), ("-O2", {"ENZYME_BUILD_AD_BEFORE_OPT": "1"})]
CONFIG_IDS = ["O0", "O2", "ad-before-opt"]

HEAD = r"""
#include "hcheck.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
extern int enzyme_dup, enzyme_const, enzyme_out;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
#define N 3
"""

CHECK = loss_check_main((1.5, 2.0, -1.0))

PROGRAMS = {
    # header and doubles in one block; a fixed-length copy
    "header_block": r"""
typedef struct { size_t n, dim; } Hdr;
__attribute__((noinline)) Hdr *make(const double *x, size_t n) {
  Hdr *h = malloc(sizeof(Hdr) + n * sizeof(double));
  h->n = n; h->dim = 1;
  for (size_t i = 0; i < n; i++) ((double *)(h + 1))[i] = x[i];
  return h;
}
__attribute__((noinline)) Hdr *copy(const Hdr *h) {
  size_t sz = sizeof(Hdr) + 3 * sizeof(double);
  Hdr *c = malloc(sz);
  memcpy(c, h, sz);
  return c;
}
double loss(const double *x) {
  Hdr *a = make(x, 3), *b = copy(a);
  double *da = (double *)(a + 1), *db = (double *)(b + 1);
  double s = da[0] * db[0] + da[1] * db[1] + sin(da[2]) * db[2];
  free(a); free(b);
  return s;
}
""",
    # the copy's length read from the header; the data through an accessor
    "sized_header_block": r"""
typedef struct { size_t n, dim; } Hdr;
static double *data(Hdr *h) { return (double *)(h + 1); }
__attribute__((noinline)) Hdr *make(const double *x, size_t n) {
  Hdr *h = malloc(sizeof(Hdr) + n * sizeof(double));
  h->n = n; h->dim = 1;
  for (size_t i = 0; i < n; i++) data(h)[i] = x[i];
  return h;
}
__attribute__((noinline)) Hdr *copy(const Hdr *h) {
  size_t sz = sizeof(Hdr) + h->n * sizeof(double);
  Hdr *c = malloc(sz);
  memcpy(c, h, sz);
  return c;
}
double loss(const double *x) {
  Hdr *a = make(x, 3), *b = copy(a);
  double s = 0;
  for (size_t i = 0; i < b->n; i++) s += data(b)[i] * data(a)[i] * (i + 1);
  free(a); free(b);
  return s;
}
""",
    # doubles copied into the middle of a fresh block (was: a string's inline buffer)
    "copy_at_offset": r"""
__attribute__((noinline)) double *make(const double *x) {
  double *h = malloc(5 * sizeof(double));
  h[0] = h[1] = 0;
  memcpy(h + 2, x, 3 * sizeof(double));
  return h;
}
double loss(const double *x) {
  double *a = make(x);
  double s = a[2] * a[2] + a[3] * exp(a[4]) + a[0];
  free(a);
  return s;
}
""",
    # doubles copied to the start of a fresh block (was refused: unknown type)
    "copy_at_start": r"""
__attribute__((noinline)) double *dup(const double *x, int n) {
  double *h = malloc(n * sizeof(double));
  memcpy(h, x, n * sizeof(double));
  return h;
}
double loss(const double *x) {
  double *a = dup(x, 3), *b = dup(a, 3);
  double s = a[0] * b[1] + a[1] * b[2] + a[2] * b[0] * b[0];
  free(a); free(b);
  return s;
}
""",
    # a vector object: a header struct pointing at a separate data block
    "vector_object": r"""
typedef struct { size_t n; double *data; } vec;
__attribute__((noinline)) vec *vec_from(const double *x, size_t n) {
  vec *v = malloc(sizeof *v);
  v->n = n;
  v->data = malloc(n * sizeof(double));
  memcpy(v->data, x, n * sizeof(double));
  return v;
}
__attribute__((noinline)) vec *vec_copy(const vec *u) { return vec_from(u->data, u->n); }
__attribute__((noinline)) void vec_free(vec *v) { free(v->data); free(v); }
double loss(const double *x) {
  vec *a = vec_from(x, 3), *b = vec_copy(a);
  for (size_t i = 0; i < b->n; i++) b->data[i] *= b->data[i];
  double s = 0;
  for (size_t i = 0; i < a->n; i++) s += a->data[i] * b->data[i];
  vec_free(a); vec_free(b);
  return s;
}
""",
}


@pytest.mark.parametrize("opt,env", CONFIGS, ids=CONFIG_IDS)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_blocks_filled_and_returned(tmp_path, name, opt, env):
    source = HEAD + PROGRAMS[name] + CHECK
    assert checks_passed(build_and_run_hcheck(tmp_path / name, source, opt=opt, env_extra=env)) == 6


# a header holding a pointer into its own block, copied whole at a run-time length
# (genann_copy): with AD before optimization the function's own accesses see only the
# header's integer and pointer, and the copy was taken for pointers: reverse gradient 0,
# silently. Now the fuller analysis' doubles make it a mixed copy, refused there; built
# after optimization it is right.
POINTER_HEADER = r"""
#include "hcheck.h"
#include <stdlib.h>
#include <string.h>
extern int enzyme_dup;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
typedef struct net { long n; double *w; } net;
double f(const net *a) {
  size_t sz = sizeof(net) + sizeof(double) * a->n;
  net *c = malloc(sz);
  memcpy(c, a, sz);
  c->w = (double *)(c + 1);
  double s = 0;
  for (int i = 0; i < c->n; ++i) s += c->w[i] * c->w[i] * (i + 1);
  free(c);
  return s;
}
static net *mk(int n) { net *r = calloc(1, sizeof(net) + n * sizeof(double)); r->n = n; r->w = (double *)(r + 1); return r; }
int main(void) {
  net *a = mk(3), *d = mk(3), *t = mk(3);
  for (int i = 0; i < 3; ++i) a->w[i] = i + 1;
  __enzyme_autodiff((void *)f, enzyme_dup, a, d);
  for (int i = 0; i < 3; ++i) hc_near("reverse", d->w[i], 2.0 * (i + 1) * (i + 1), 1e-12);
  t->w[1] = 1;
  hc_near("forward", __enzyme_fwddiff((void *)f, enzyme_dup, a, t), 8.0, 1e-12);
  return hc_done();
}
"""


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_pointer_header_copied_whole(tmp_path, opt):
    assert checks_passed(build_and_run_hcheck(tmp_path / "h", POINTER_HEADER, opt=opt)) == 4


def test_pointer_header_copied_whole_before_optimization_is_refused(tmp_path):
    work = tmp_path / "w"
    os.makedirs(work)
    shutil.copy(HCHECK, work)
    (work / "prog.c").write_text(POINTER_HEADER)
    build = subprocess.run([ENZYME_BUILD, "cc", "-O2", "-I.", "prog.c", "-o", "prog"], cwd=work,
                           capture_output=True, text=True, timeout=300,
                           env=dict(os.environ, ENZYME_BUILD_AD_BEFORE_OPT="1"))
    assert build.returncode == 1 and not (work / "prog").exists(), build.stderr
    assert "cannot differentiate a memcpy of mixed double/pointer" in build.stderr, build.stderr
