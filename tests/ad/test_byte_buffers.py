"""Global `char` arrays used as raw storage for floats (analysis/activity.py:
_byte_buffers_holding_floats). The class: a mutable byte array some function stores floats
into holds floats as much as a `double` array does, and gets a shadow global. Members: a
bump allocator handing out doubles from `char buffer[1024]` (Enzyme's customalloc test,
which was refused at -O2), a struct placed into an aligned byte pool, doubles moved in and
out with memcpy, reverse and forward, against central differences; and a byte buffer used
for text only next to differentiated code (no shadow needed, still builds)."""
from __future__ import annotations

import pytest
from hcheck_run import build_and_run_hcheck, checks_passed

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
int main(void) {
  double a = 0.7;
  CHECK(bump);
  CHECK(placed);
  CHECK(copied);
  CHECK(labelled);
  return hc_done();
}
"""


@pytest.mark.parametrize("opt,env", CONFIGS, ids=IDS)
def test_global_byte_buffers_holding_doubles(tmp_path, opt, env):
    assert checks_passed(build_and_run_hcheck(tmp_path / "bytes", SOURCE, opt=opt, env_extra=env)) == 8
