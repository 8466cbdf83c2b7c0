"""Gradients of counting loops in the shapes other than O2's canonical `iv.next == bound` from
0 by 1: loops that go on while `iv + 1 < bound` (do-while loops, and exit tests LLVM's
induction-variable pass did not rewrite to `==`), loops whose latch tests the phi itself
(`i <= n`), loops counting down and loops stepping by 2 or -3. Each keeps values per
iteration; they get one static tape record sized at the loop's entry (no push per iteration),
and the gradient matches central differences for counts that clamp (bound <= start: one
iteration), counts of one and longer runs."""
from __future__ import annotations

import subprocess

import pytest

from enzyme_build import llvm
from enzyme_build.analysis.cfg import analyze_cfg
from enzyme_build.ir import parse_module
from enzyme_build.ad.driver import differentiate_module
from ad_helpers import CLANG, function_block, function_body

# f(x, n) = s after `do { s += sin(x[i] * s + x[i]); } while (++i < n)` in several IR shapes of
# the latch test; START is the first i (0, or n / 4 computed before the loop)
SHAPES = {
    "slt": ("i64", "0", "nuw nsw", "%c = icmp slt i64 %i.next, %n", "br i1 %c, label %loop, label %exit"),
    "sge_exit_first": ("i64", "0", "nsw", "%c = icmp sge i64 %i.next, %n", "br i1 %c, label %exit, label %loop"),
    "ugt_swapped": ("i64", "0", "nuw", "%c = icmp ugt i64 %n, %i.next", "br i1 %c, label %loop, label %exit"),
    "ult_i32": ("i32", "0", "nuw nsw", "%c = icmp ult i32 %i.next, %n32", "br i1 %c, label %loop, label %exit"),
    "slt_from_quarter": ("i64", "%first", "nsw", "%c = icmp slt i64 %i.next, %n", "br i1 %c, label %loop, label %exit"),
    "ult_i32_from_quarter": ("i32", "%first32", "nuw", "%c = icmp ult i32 %i.next, %n32",
                             "br i1 %c, label %loop, label %exit"),
    # the phi itself tested: `for (i = first; i < n; i++)` rotated, `i <= n` inclusive
    "slt_phi_from_quarter": ("i64", "%first", "nsw", "%c = icmp slt i64 %i, %nm1", "br i1 %c, label %loop, label %exit"),
    "eq_phi": ("i64", "0", "nuw", "%c = icmp eq i64 %i, %nm1", "br i1 %c, label %exit, label %loop"),
    # counting down from n - 1 (O2's `for (k = n - 1; k >= 0; k--)`: the phi tested above 0)
    "down_ugt_phi": ("i64", "%nm1", "nsw", "%c = icmp ugt i64 %i, 0", "br i1 %c, label %loop, label %exit"),
    "down_sgt_next": ("i64", "%nm1", "nsw", "%c = icmp sgt i64 %i.next, %first", "br i1 %c, label %loop, label %exit"),
    "down_eq_next": ("i32", "%nm1_32", "nsw", "%c = icmp eq i32 %i.next, -1", "br i1 %c, label %exit, label %loop"),
    # constant steps other than 1: `i += 2` to n, from a start, the phi tested; a stride-3
    # count down
    "step2_ult": ("i64", "0", "nuw nsw", "%c = icmp ult i64 %i.next, %n", "br i1 %c, label %loop, label %exit"),
    "step2_slt_from_quarter": ("i32", "%first32", "nsw", "%c = icmp slt i32 %i.next, %n32",
                               "br i1 %c, label %loop, label %exit"),
    "step2_slt_phi": ("i64", "0", "nsw", "%c = icmp slt i64 %i, %nm2", "br i1 %c, label %loop, label %exit"),
    "down3_sgt_phi": ("i64", "%nm1", "nsw", "%c = icmp sgt i64 %i, 2", "br i1 %c, label %loop, label %exit"),
}

TEMPLATE = """
define double @f_NAME(ptr %x, i64 %n) {
entry:
  %n32 = trunc i64 %n to i32
  %first = sdiv i64 %n, 4
  %first32 = trunc i64 %first to i32
  %nm1 = add i64 %n, -1
  %nm2 = add i64 %n, -2
  %nm1_32 = trunc i64 %nm1 to i32
  br label %loop
loop:
  %i = phi ITY [ START, %entry ], [ %i.next, %loop ]
  %s = phi double [ 0.5, %entry ], [ %s.next, %loop ]
  %w = WIDEN
  %p = getelementptr inbounds double, ptr %x, i64 %w
  %v = load double, ptr %p, align 8
  %m = fmul double %v, %s
  %a = fadd double %m, %v
  %sn = call double @llvm.sin.f64(double %a)
  %s.next = fadd double %s, %sn
  %i.next = add FLAGS ITY %i, STEP
  TEST
  BRANCH
exit:
  ret double %s.next
}

define void @g_NAME(ptr %x, ptr %dx, i64 %n) {
entry:
  call void (ptr, ...) @__enzyme_autodiff(ptr @f_NAME, ptr @enzyme_dup, ptr %x, ptr %dx, ptr @enzyme_const, i64 %n)
  ret void
}
"""

DECLS = """
@enzyme_dup = external global i32
@enzyme_const = external global i32
declare double @llvm.sin.f64(double)
declare void @__enzyme_autodiff(ptr, ...)
"""

DRIVER = r"""
#include <stdio.h>
#include <math.h>
#define N 12
double f_NAME(const double *x, long n);
void g_NAME(const double *x, double *dx, long n);
int main(void) {
  long counts[] = {COUNTS};
  for (int c = 0; c < 7; c++) {
    long n = counts[c];
    double x[N], dx[N] = {0};
    for (int i = 0; i < N; i++) x[i] = 0.3 + 0.1 * i - 0.02 * i * i;
    g_NAME(x, dx, n);
    for (int i = 0; i < N; i++) {
      double h = 1e-6, xp[N], xm[N];
      for (int j = 0; j < N; j++) xp[j] = xm[j] = x[j];
      xp[i] += h; xm[i] -= h;
      double fd = (f_NAME(xp, n) - f_NAME(xm, n)) / (2 * h);
      printf("%ld %d %.17g %.17g\n", n, i, dx[i], fd);
    }
  }
  return 0;
}
"""


STEPS = {"down": "-1", "down3": "-3", "step2": "2"}   # by the shape name's first word


def step_of(name: str) -> str:
    return STEPS.get(name.split("_")[0], "1")


def signed(name: str) -> bool:
    return "icmp s" in SHAPES[name][3]


def module_of(name: str) -> str:
    ity, start, flags, test, branch = SHAPES[name]
    widen = "add i64 %i, 0" if ity == "i64" else ("sext i32 %i to i64" if signed(name) else "zext i32 %i to i64")
    return (TEMPLATE.replace("NAME", name).replace("ITY", ity).replace("START", start)
            .replace("FLAGS", flags).replace("TEST", test).replace("BRANCH", branch)
            .replace("WIDEN", widen).replace("STEP", step_of(name)))


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_loop_counted_from_its_clamped_bound_gets_a_static_record(name, tmp_path):
    out = differentiate_module(module_of(name) + DECLS)
    llvm.verify(llvm.parse_assembly(out, name), generated=True)
    fn = function_body(out, f"diffe_f_{name}")
    # one record for all iterations, reserved before the loop; nothing pushed per iteration
    assert "@__enzyme_build_tape_frame" in fn
    assert "tape_push" not in function_block(fn, "loop") and "tape_pop" not in function_block(fn, "rev$loop")
    # the loop is counted; the IV's last value, which the reverse sweep replays the loop
    # from, is computed from the count's end, not captured on the exit
    loop = analyze_cfg(parse_module(module_of(name) + DECLS).functions[f"f_{name}"]).loops[0]
    assert loop.bound is not None and loop.trip_count is None
    if step_of(name) in ("1", "-1"):
        assert "%ivexit" not in fn   # (a larger step's last IV is captured on the exit)

    # the gradient, compiled, against central differences (one shape per program)
    ll = tmp_path / f"{name}.ll"
    ll.write_text(out)
    driver = tmp_path / "driver.c"
    # a signed test clamps a negative bound; an unsigned one a bound of 0 (-3 would be huge);
    # the loops to i == n - 1 and those counting down from n - 1 need n >= 1
    if name.startswith(("eq_", "down")):
        counts = "1, 1, 2, 3, 5, 7, 12"
    elif signed(name):
        counts = "-3, 0, 1, 2, 3, 7, 12"
    else:
        counts = "0, 0, 1, 2, 3, 7, 12"
    driver.write_text(DRIVER.replace("NAME", name).replace("COUNTS", counts))
    exe = tmp_path / name
    subprocess.run([CLANG, "-O2", "-Wno-override-module", str(ll), str(driver), "-o", str(exe), "-lm"],
                   check=True, capture_output=True, text=True)
    rows = [line.split() for line in subprocess.run([str(exe)], capture_output=True, text=True,
                                                     check=True, timeout=60).stdout.splitlines()]
    assert len(rows) == 7 * 12
    touched = 0
    for n, i, grad, fd in rows:
        grad, fd = float(grad), float(fd)
        assert abs(grad - fd) <= 1e-6 * max(1.0, abs(fd)), (name, n, i, grad, fd)
        touched += grad != 0.0
    assert touched >= 12   # the runs of several iterations reach most inputs
