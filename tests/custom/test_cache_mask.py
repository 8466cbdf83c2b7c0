"""`__enzyme_build_cache_mask_f`: the engine tells a rule library's augment and gradient, per
call site, which pointer arguments' memory may change before the gradient runs and which
have a shadow there (custom/convention.py). Read by custom/collect.py; the masks a real
program's call sites get, and the gradients a rule that trusts them computes, end to end
through `enzyme-build cc` with a hand-written rule (nothing BLAS about it).
"""
from __future__ import annotations

import pytest

from enzyme_build.custom.collect import collect_registry
from enzyme_build.custom.convention import cache_mask_values
from enzyme_build.errors import EnzymeBuildError

from custom_helpers import ENZYME_BUILD, clang_ir, run, write

# y[i] += a[i]^2: the gradient reads a (for a's adjoint, when y's exists); the augment copies
# it only when a's memory may change before the gradient runs, and reads it in place otherwise
RULE = r"""
#include <stdlib.h>
#include <string.h>
__attribute__((noinline)) void sqacc(const double *a, double *y, int n) {
  for (int i = 0; i < n; i++) y[i] += a[i] * a[i];
}
long long seen_over[16], seen_shad[16];
int seen, copies;
typedef struct { const double *a; int own; } tape_t;
void *sqacc_aug(const double *a, double *da, double *y, double *dy, int n, long long over, long long shad) {
  (void)da; (void)dy;
  seen_over[seen] = over; seen_shad[seen] = shad; seen++;
  tape_t *t = calloc(1, sizeof *t);
  if ((shad & 3) == 3) {            /* a's adjoint exists here: the gradient reads a */
    if (over & 1) {
      double *c = malloc(n * sizeof(double));
      memcpy(c, a, n * sizeof(double));
      t->a = c; t->own = 1; copies++;
    } else {
      t->a = a;
    }
  }
  sqacc(a, y, n);
  return t;
}
void sqacc_grad(const double *a, double *da, double *y, double *dy, int n, long long over, long long shad,
                void *tape) {
  (void)a; (void)y; (void)over; (void)shad;
  tape_t *t = tape;
  if (da && dy)
    for (int i = 0; i < n; i++) da[i] += 2 * t->a[i] * dy[i];
  if (t->own) free((void *)t->a);
  free(t);
}
void *__enzyme_register_gradient_sqacc[3] = {(void *)sqacc, (void *)sqacc_aug, (void *)sqacc_grad};
void *__enzyme_build_null_shadows_sqacc[2] = {(void *)sqacc, (void *)".o."};
void *__enzyme_build_cache_mask_sqacc[2] = {(void *)sqacc, (void *)"rw."};
"""

PROGRAM = RULE + r"""
#include <stdio.h>
extern int enzyme_dup, enzyme_const, enzyme_not_overwritten;
void __enzyme_autodiff(void *, ...);
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);
static double loss(const double *y) { return y[0] * y[1] + 3 * y[2]; }
/* a is never written again */
double keep(const double *a, double *y) { sqacc(a, y, 3); return loss(y); }
/* a is overwritten after the call (the gradient needs its old value) */
double clobber(double *a, double *y) { sqacc(a, y, 3); double s = loss(y); a[0] = 5; a[2] = -1; return s; }
/* a heap copy of the function's own, freed at the end: the free waits for the reverse sweep */
double own(const double *a0, double *y) {
  double *a = malloc(3 * sizeof(double));
  memcpy(a, a0, 3 * sizeof(double));
  sqacc(a, y, 3);
  double s = loss(y);
  free(a);
  return s;
}
/* split mode: a and y cannot overlap; the caller may or may not vouch for a */
void piece(const double *restrict a, double *restrict y, double *restrict out) { sqacc(a, y, 3); *out = loss(y); }

static double A0[3] = {0.5, -1.25, 2}, Y0[3] = {0.25, 1, -0.5};
static void reset(double *a, double *y, double *da, double *dy) {
  memcpy(a, A0, sizeof A0); memcpy(y, Y0, sizeof Y0); memset(da, 0, 3 * sizeof(double)); memset(dy, 0, 3 * sizeof(double));
}
/* d loss / d a_i = 2 a_i dl/dy_i at y = y0 + a^2 */
static int check(const char *what, const double *da) {
  double y[3], g[3];
  for (int i = 0; i < 3; i++) y[i] = Y0[i] + A0[i] * A0[i];
  g[0] = y[1]; g[1] = y[0]; g[2] = 3;
  int bad = 0;
  for (int i = 0; i < 3; i++) if (da[i] != 2 * A0[i] * g[i]) bad = 1;
  printf("%s %s\n", what, bad ? "WRONG" : "ok");
  return bad;
}
int main(void) {
  double a[3], y[3], da[3], dy[3], out, dout;
  int bad = 0;
  reset(a, y, da, dy); __enzyme_autodiff((void *)keep, enzyme_dup, a, da, enzyme_dup, y, dy); bad |= check("keep", da);
  reset(a, y, da, dy); __enzyme_autodiff((void *)clobber, enzyme_dup, a, da, enzyme_dup, y, dy); bad |= check("clobber", da);
  reset(a, y, da, dy); __enzyme_autodiff((void *)own, enzyme_dup, a, da, enzyme_dup, y, dy); bad |= check("own", da);
  reset(a, y, da, dy); __enzyme_autodiff((void *)keep, enzyme_const, a, enzyme_dup, y, dy);
  /* split mode, a not vouched for: the caller overwrites it before __enzyme_reverse */
  reset(a, y, da, dy); dout = 1;
  void *t = __enzyme_augmentfwd((void *)piece, enzyme_dup, a, da, enzyme_dup, y, dy, enzyme_dup, &out, &dout);
  a[0] = a[1] = a[2] = 100;
  __enzyme_reverse((void *)piece, enzyme_dup, a, da, enzyme_dup, y, dy, enzyme_dup, &out, &dout, t);
  bad |= check("split", da);
  /* split mode, a vouched for (and kept): no copy */
  reset(a, y, da, dy); dout = 1;
  t = __enzyme_augmentfwd((void *)piece, enzyme_not_overwritten, enzyme_dup, a, da, enzyme_dup, y, dy,
                          enzyme_dup, &out, &dout);
  __enzyme_reverse((void *)piece, enzyme_not_overwritten, enzyme_dup, a, da, enzyme_dup, y, dy,
                   enzyme_dup, &out, &dout, t);
  bad |= check("split-kept", da);
  /* the rule's own function differentiated: its augment and gradient called directly */
  reset(a, y, da, dy); dy[0] = dy[1] = dy[2] = 1;
  __enzyme_autodiff((void *)sqacc, enzyme_dup, a, da, enzyme_dup, y, dy, 3);
  int direct = da[0] != 2 * A0[0] || da[1] != 2 * A0[1] || da[2] != 2 * A0[2];
  reset(a, y, da, dy); dy[0] = dy[1] = dy[2] = 1;
  t = __enzyme_augmentfwd((void *)sqacc, enzyme_dup, a, da, enzyme_dup, y, dy, 3);
  a[0] = a[1] = a[2] = 7;
  __enzyme_reverse((void *)sqacc, enzyme_dup, a, da, enzyme_dup, y, dy, 3, t);
  direct |= da[0] != 2 * A0[0] || da[1] != 2 * A0[1] || da[2] != 2 * A0[2];
  printf("direct %s\n", direct ? "WRONG" : "ok");
  bad |= direct;
  for (int i = 0; i < seen; i++) printf("masks %lld %lld\n", seen_over[i], seen_shad[i]);
  printf("copies %d\n", copies);
  return bad;
}
"""


def test_engine_passes_each_call_site_what_may_change_and_what_has_a_shadow(work):
    write(work, "prog.c", PROGRAM)
    proc = run([ENZYME_BUILD, "cc", "-O2", "prog.c", "-o", "prog"], work)
    assert proc.returncode == 0, proc.stderr
    result = run([work / "prog"], work)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert [line for line in lines if line.endswith(("ok", "WRONG"))] == \
        ["keep ok", "clobber ok", "own ok", "split ok", "split-kept ok", "direct ok"]
    masks = [tuple(int(v) for v in line.split()[1:]) for line in lines if line.startswith("masks")]
    # bit 0: a, bit 1: y (written by the call: its bit says nothing about the call's own write)
    assert masks[0] == (0, 3)          # keep: nothing writes a afterwards
    assert masks[1][0] & 1 == 1        # clobber: a[0] = 5 after the call
    assert masks[2] == (0, 3)          # own: only the deferred free follows
    assert masks[3] == (0, 2)          # keep with a enzyme_const: no shadow for a
    assert masks[4][0] & 1 == 1        # split, a not vouched for
    assert masks[5][0] & 1 == 0        # split, enzyme_not_overwritten a (restrict: y cannot reach it)
    assert masks[6] == (0, 3)          # sqacc itself in one sweep: nothing runs in between
    assert masks[7] == (3, 3)          # sqacc itself in split mode, nothing vouched for
    assert lines[-1] == "copies 3"


def test_cache_mask_values():
    assert cache_mask_values("rw.", [True, True, False], [False, True, False]) == ["i64 3", "i64 2"]
    assert cache_mask_values(".r.w", [True, False, True, True], [True, True, True, False]) == ["i64 8", "i64 2"]


def test_registration_is_read(work):
    registry = collect_registry(clang_ir(work, "lib.c", RULE))
    rule = registry.rules["sqacc"]
    assert (rule.augment, rule.gradient, rule.null_shadows, rule.cache_mask) == \
        ("sqacc_aug", "sqacc_grad", ".o.", "rw.")
    assert rule.origins["cache_mask"] == "__enzyme_build_cache_mask_sqacc"


@pytest.mark.parametrize("letters, message", [
    ("rx.", "one letter per parameter: r, w or ."),
    ("r.w", r"'r' \(only read\) or 'w' \(written\) at each pointer"),
    ("rw", "one letter per parameter"),
])
def test_malformed_letters_are_an_error(work, letters, message):
    text = clang_ir(work, "bad.c", RULE.replace('(void *)"rw."', f'(void *)"{letters}"'))
    with pytest.raises(EnzymeBuildError, match=message):
        collect_registry(text)


NO_MASKS = r"""
void sqacc(const double *a, double *y, int n) { for (int i = 0; i < n; i++) y[i] += a[i] * a[i]; }
void *sqacc_aug(const double *a, double *da, double *y, double *dy, int n) { sqacc(a, y, n); return 0; }
void sqacc_grad(const double *a, double *da, double *y, double *dy, int n, void *tape) {
  for (int i = 0; da && dy && i < n; i++) da[i] += 2 * a[i] * dy[i];
}
void *__enzyme_register_gradient_sqacc[3] = {(void *)sqacc, (void *)sqacc_aug, (void *)sqacc_grad};
void *__enzyme_build_cache_mask_sqacc[2] = {(void *)sqacc, (void *)"rw."};
"""


def test_rules_without_the_masks_are_an_arity_error(work):
    """A cache-mask registration on rules written without the two masks: refused at link time."""
    with pytest.raises(EnzymeBuildError, match=r"the augment rule sqacc_aug of sqacc takes 5 parameter\(s\).*needs 7"):
        collect_registry(clang_ir(work, "nomask.c", NO_MASKS))


def test_registration_without_reverse_rules_is_an_error(work):
    text = clang_ir(work, "norules.c", NO_MASKS.replace(
        "void *__enzyme_register_gradient_sqacc[3] = {(void *)sqacc, (void *)sqacc_aug, (void *)sqacc_grad};\n", ""))
    with pytest.raises(EnzymeBuildError, match="has no augment and gradient rules"):
        collect_registry(text)
