"""Records of integers and pointers copied whole (`*a = *b`, a struct passed through memory)
where the pointers lead to differentiated data.

The class: Enzyme's `ReverseMode/mixedstruct1-old.c` copies a window frame
`{int R_start, R_end, C_start, C_end; float *data}` with `*frame1 = *frame` before recursing
on it. clang emits a memcpy tagged int/int/int/int/pointer, which was refused as "mixed
int/pointer" at every level. Such a copy moves the shadow's bytes along, as a copy of
pointers does (the shadow's integer bytes mean nothing), so writes through the copied
pointer reach the shadow buffer. Each program is checked against central differences at
-O0, -O2 and with AD before optimization.
"""
from __future__ import annotations

import pytest

from ad_helpers import LEVELS, check_program_gradient

PROGRAMS = {
    # recursive tiling on a frame copied by assignment (the upstream test's shape)
    "frame_recursion": r"""
typedef struct { int r0, r1, c0, c1; const double *data; } frame;
static double tile(const frame *f) {
  if (f->r1 - f->r0 > 1) {
    frame *a = malloc(sizeof(frame)), *b = malloc(sizeof(frame));
    *a = *f; *b = *f;
    a->r1 = b->r0 = (f->r0 + f->r1) / 2;
    double s = tile(a) + tile(b);
    free(a); free(b);
    return s;
  }
  double s = 0;
  for (int r = f->r0; r < f->r1; r++) for (int c = f->c0; c < f->c1; c++) s += sin(f->data[(r * 2 + c) % 4]) * (r + 1);
  return s;
}
double f(const double *x) { frame fr = {0, 4, 0, 2, x}; return tile(&fr); }
""",
    # a view struct assigned into an array of views, then written through
    "views_array": r"""
typedef struct { long n; int stride, flags; double *p; } view;
__attribute__((noinline)) static void scale(view *v, double s) { for (long i = 0; i < v->n; i++) v->p[i * v->stride] *= s; }
double f(const double *x) {
  double buf[4]; for (int i = 0; i < 4; i++) buf[i] = x[i];
  view v = {2, 2, 0, buf}, vs[2];
  vs[0] = v; vs[1] = v; vs[1].p = buf + 1;
  scale(&vs[0], x[3]); scale(&vs[1], 0.5 + x[0] * x[0]);
  return buf[0] * buf[1] + buf[2] * buf[3] + sin(buf[0]);
}
""",
    # records of sizes and two pointers copied with memcpy, then used through the copy
    "memcpy_records": r"""
typedef struct { int len; int pad; double *in, *out; } job;
double f(const double *x) {
  double in[4], out[4] = {0};
  for (int i = 0; i < 4; i++) in[i] = x[i] * (i + 1);
  job jobs[2] = {{2, 0, in, out}, {2, 0, in + 2, out + 2}}, copy[2];
  memcpy(copy, jobs, sizeof(jobs));
  for (int k = 0; k < 2; k++) for (int i = 0; i < copy[k].len; i++) copy[k].out[i] = exp(0.3 * copy[k].in[i]);
  return out[0] * out[3] + out[1] - out[2] * x[1];
}
""",
}


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_int_pointer_records(name, level, tmp_path):
    check_program_gradient(tmp_path, PROGRAMS[name], level)
