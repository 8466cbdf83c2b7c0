"""Global `char` arrays used as raw storage for floats (analysis/activity.py:
_byte_buffers_holding_floats). The class: a mutable byte array some function stores floats
into holds floats as much as a `double` array does, and gets a shadow global. Members: a
bump allocator handing out doubles from `char buffer[1024]` (Enzyme's customalloc test,
which was refused at -O2), a struct placed into an aligned byte pool, doubles moved in and
out with memcpy, reverse and forward, against central differences; and a byte buffer used
for text only next to differentiated code (no shadow needed, still builds).

A second class (`_pool_functions`): the pointer into the byte array comes back from a call,
and the function storing floats through it never names the array -- an arena allocator kept
out of line (`void *bump(int n) { p = pool + used; used += n; return p; }`), a wrapper of
it, one handed the pool as an argument (Enzyme's customalloc, with its
`__enzyme_allocation_like` registration), a pointer offset by a helper taking the base.
These were refused ("an active value is stored where enzyme-build cannot give the memory a
shadow") at every level for the out-of-line allocator, and with AD before optimization for
the others."""
from __future__ import annotations

import pytest
from hcheck_run import build_and_run_hcheck, checks_passed

# each function of one double: reverse and forward against a central difference
CHECK_C = r"""
static double fd(double (*f)(double), double a) {
  double h = hc_h(a);
  return (f(a + h) - f(a - h)) / (2 * h);
}
#define CHECK(f)                                                         \
  do {                                                                   \
    double want = fd(f, a);                                              \
    hc_near(#f " reverse", __enzyme_autodiff((void *)f, a), want, 1e-6);  \
    hc_near(#f " forward", __enzyme_fwddiff((void *)f, a, 1.0), want, 1e-6); \
  } while (0)
"""

CONFIGS = [("-O0", {}), ("-O2", {}), ("-O3", {}), ("-O2", {"ENZYME_BUILD_AD_BEFORE_OPT": "1"})]
IDS = ["O0", "O2", "O3", "ad-before-opt"]

SOURCE = r"""
#include "hcheck.h"
#include <enzyme/enzyme.h>
#include <string.h>
char buffer[1024];
int offset = 0;
__attribute__((noinline)) double *take(double x) {      /* a bump allocator over raw bytes */
  double *m = (double *)&buffer[8 * offset++];
  *m = x;
  return m;
}
double bump(double a) { offset = 0; double *t = take(a); double *u = take(a * a); return *t * *u; }

typedef struct { double w, b; } layer;
_Alignas(16) static char pool[256];
__attribute__((noinline)) layer *place(double w, double b, int k) {
  layer *l = (layer *)(pool + sizeof(layer) * k);
  l->w = w; l->b = b;
  return l;
}
double placed(double a) { layer *l = place(a, 2 * a, 3); return l->w * l->w + sin(l->b); }

char bytes[64];
__attribute__((noinline)) void put(int k, double v) { memcpy(bytes + 8 * k, &v, sizeof v); }
__attribute__((noinline)) double get(int k) { double v; memcpy(&v, bytes + 8 * k, sizeof v); return v; }
double copied(double a) { put(1, a * 3); put(2, exp(a)); return get(1) * get(2); }

char label[32];
double labelled(double a) { snprintf(label, sizeof label, "step %d", 3); return a * a * (double)strlen(label); }

"""


POOLS = r"""
#include "hcheck.h"
#include <enzyme/enzyme.h>
#include <string.h>
static char arena[4096];
static int used;
__attribute__((noinline)) void *bump(int n) { void *p = arena + used; used += n; return p; }
__attribute__((noinline)) double *doubles(int n) { return (double *)bump(n * (int)sizeof(double)); }
double arena_fn(double x) {
  used = 0;
  double *a = bump(3 * sizeof(double)), *b = doubles(2);
  a[0] = x; a[1] = sin(x) * a[0]; a[2] = a[1] * a[1];
  b[0] = a[2] + cos(a[1]); b[1] = b[0] * x;
  return a[2] + b[1];
}

char buffer[1024];
int offset = 0;
void *myallocator(void *buf, int size, int *off) {
  char *cur = (char *)buf;
  int prev = *off;
  *off += size;
  return &cur[prev];
}
static void myfree(int *off, void *tofree) { (void)off; (void)tofree; }
void *__enzyme_allocation_like[4] = {(void *)myallocator, (void *)1, (void *)"2,-1", (void *)myfree};
__attribute__((noinline)) double *set(double x) {
  double *m = (double *)myallocator(buffer, sizeof(double), &offset);
  *m = x;
  return m;
}
double registered(double a) { offset = 0; double *t = set(a), *u = set(a * a); return *t * exp(*u); }

_Alignas(8) static char slab[512];
__attribute__((noinline)) double *at(char *base, int k) { return (double *)(base + 8 * k); }
double offset_fn(double a) {
  double *p = at(slab, 2), *q = at(slab, 5);
  *p = a * a; *q = sin(*p) + a;
  return *p * *q;
}

static char names[64];
__attribute__((noinline)) char *name_buf(void) { return names; }
double text_fn(double a) { snprintf(name_buf(), 16, "x%d", 7); return a * a * (double)strlen(names); }

"""


def _program(definitions: str, a: float, functions: list[str]) -> str:
    """The definitions, then a main checking each function at `a` (two checks each)."""
    checks = "".join(f"  CHECK({f});\n" for f in functions)
    return definitions + CHECK_C + f"int main(void) {{\n  double a = {a};\n{checks}  return hc_done();\n}}\n"


PROGRAMS = {
    "buffers": _program(SOURCE, 0.7, ["bump", "placed", "copied", "labelled"]),
    "pools": _program(POOLS, 0.6, ["arena_fn", "registered", "offset_fn", "text_fn"]),
}


@pytest.mark.parametrize("opt,env", CONFIGS, ids=IDS)
def test_global_byte_buffers_holding_doubles(tmp_path, opt, env):
    run = build_and_run_hcheck(tmp_path / "bytes", PROGRAMS["buffers"], opt=opt, env_extra=env)
    assert checks_passed(run) == 8


@pytest.mark.parametrize("opt,env", CONFIGS, ids=IDS)
def test_byte_pools_reached_through_calls(tmp_path, opt, env):
    run = build_and_run_hcheck(tmp_path / "pools", PROGRAMS["pools"], opt=opt, env_extra=env)
    assert checks_passed(run) == 8
