"""The cache planner's printer (`CachePlanner.describe`, written to cache-plan.txt under
ENZYME_BUILD_KEEP): for each reverse block, the forward values it reads and how each read is
served, then what every record keeps. IR in, plan and verified IR out."""
from __future__ import annotations

import os
import re
import subprocess
import sys

from enzyme_build import llvm
from enzyme_build.ad.cache import listening_to_plans
from enzyme_build.ad.driver import differentiate_module

DECLS = """
@enzyme_dup = external global i32
@enzyme_const = external global i32
declare double @__enzyme_autodiff(ptr, ...)
declare ptr @__enzyme_augmentfwd(ptr, ...)
declare void @__enzyme_reverse(ptr, ...)
declare double @llvm.exp.f64(double)
declare double @llvm.sqrt.f64(double)
"""

# sum_i exp(x[i]) * x[i]: exp's result is kept per iteration (its derivative is itself);
# the load of x[i] is re-read (x is never written), the IV replayed.
EXP_LOOP = """
define double @f(ptr %x, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %s = phi double [ 0.0, %entry ], [ %s.next, %loop ]
  %p = getelementptr inbounds double, ptr %x, i64 %i
  %xi = load double, ptr %p, align 8
  %e = call double @llvm.exp.f64(double %xi)
  %t = fmul double %e, %xi
  %s.next = fadd double %s, %t
  %i.next = add nuw nsw i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop
exit:
  %q = fmul double %s.next, %s.next
  ret double %q
}
"""

# outside any loop, a product of two square roots: the roots are kept once per call
STRAIGHT = """
define double @g(ptr %x) {
entry:
  %a = load double, ptr %x, align 8
  %ra = call double @llvm.sqrt.f64(double %a)
  %p1 = getelementptr inbounds double, ptr %x, i64 1
  %b = load double, ptr %p1, align 8
  %rb = call double @llvm.sqrt.f64(double %b)
  %m = fmul double %ra, %rb
  store double 0.0, ptr %x, align 8
  ret double %m
}
"""


def caller(fn: str, args: str, entry: str = "__enzyme_autodiff") -> str:
    return f"""
define void @main_{fn}(ptr %x, ptr %dx, i64 %n) {{
entry:
  %d = load i32, ptr @enzyme_dup, align 4
  %c = load i32, ptr @enzyme_const, align 4
  %r = call double (ptr, ...) @{entry}(ptr @{fn}, {args})
  ret void
}}
"""


def plans_of(module_text: str) -> tuple[list[str], str]:
    plans: list[str] = []
    with listening_to_plans(plans.append):
        out = differentiate_module(module_text)
    llvm.verify(llvm.parse_assembly(out, "plan"), generated=True)
    return plans, out


def rows(plan: str) -> dict[tuple[str, str], str]:
    """(reverse block, value) -> how, from the plan's table."""
    out = {}
    for line in plan.splitlines()[1:]:
        m = re.match(r'^  (%\S+)\s+(%\S+)\s+(.+?)\s{2,}(\S.*)$', line)
        if m:
            out[(m.group(1), m.group(2))] = m.group(4)
    return out


def test_loop_value_kept_per_iteration_in_a_static_record():
    plans, _ = plans_of(DECLS + EXP_LOOP + caller("f", "i32 %d, ptr %x, ptr %dx, i32 %c, i64 %n"))
    assert len(plans) == 1
    plan = plans[0]
    assert plan.startswith("cache plan of @diffe_f (combined mode)")
    got = rows(plan)
    assert got[("%loop", "%e")] == "kept: static record of loop %loop"
    assert got[("%loop", "%xi")] == "re-read from memory"
    assert got[("%loop", "%i")] == "IV replayed"
    assert "static record of loop %loop: 8 B per iteration of loop (%e)" in plan
    # the final square's operand is a value defined in the loop, read after it: kept once
    assert any(k[1] == "%s.next" and v.startswith("kept: cache slot") for k, v in got.items()), plan
    assert re.search(r"^reads: .*\b1 IV replayed\b", plan, re.M)


def test_straight_line_values_free_in_combined_mode_and_in_the_frame_record_when_split():
    # combined mode: the reverse sweep runs in the same function, after the forward one,
    # so values outside loops are simply used (nothing to keep)
    plans, _ = plans_of(DECLS + STRAIGHT + caller("g", "i32 %d, ptr %x, ptr %dx"))
    assert "(the reverse sweep reads no forward value that is not free)" in plans[0]
    assert "\nreads: none\n" in plans[0]
    # split mode: the reverse piece is another function; the roots go into the frame record
    text = DECLS + STRAIGHT + """
define void @main_g(ptr %x, ptr %dx) {
entry:
  %d = load i32, ptr @enzyme_dup, align 4
  %t = call ptr (ptr, ...) @__enzyme_augmentfwd(ptr @g, i32 %d, ptr %x, ptr %dx)
  call void (ptr, ...) @__enzyme_reverse(ptr @g, i32 %d, ptr %x, ptr %dx, double 1.0, ptr %t)
  ret void
}
"""
    plans, _ = plans_of(text)
    split = next(p for p in plans if "(split mode)" in p)
    assert split.startswith("cache plan of @augmented_g / @reverse_g (split mode)")
    got = rows(split)
    assert got[("%entry", "%ra")].startswith("kept: frame record cell ")
    assert got[("%entry", "%rb")].startswith("kept: frame record cell ")
    frame = [line for line in split.splitlines() if line.startswith("frame record")]
    assert frame and "B per call" in frame[0] and "%ra" in frame[0] and "%rb" in frame[0], split


def test_keep_dir_gets_the_plan(tmp_path):
    """A build with ENZYME_BUILD_KEEP writes the plans next to the AD stage's IR."""
    src = tmp_path / "p.c"
    src.write_text("""
#include <math.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
__attribute__((noinline)) double f(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += exp(x[i]) * x[i];
  return s * s;
}
int main(void) {
  double x[3] = {0.1, 0.2, 0.3}, d[3] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, d, enzyme_const, 3);
  return d[0] > 0 ? 0 : 1;
}
""")
    keep = tmp_path / "keep"
    exe = os.path.join(os.path.dirname(sys.executable), "enzyme-build")
    proc = subprocess.run([exe, "cc", "-O2", str(src), "-o", str(tmp_path / "p"), "-lm"],
                          env=dict(os.environ, ENZYME_BUILD_KEEP=str(keep)), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert subprocess.run([str(tmp_path / "p")]).returncode == 0
    plans = list(keep.glob("*.ad/cache-plan.txt"))
    assert len(plans) == 1
    text = plans[0].read_text()
    assert text.startswith("cache plan of @diffe_f (combined mode)")
    assert re.search(r"^static record of loop %\S+: 8 B per iteration of loop \(%\S+\)$", text, re.M), text


# the gradient of f(x, n) against central differences in x[0..m), for the C programs below
FD_CHECK = r"""
static int check(const char *what, double (*f)(const double *, int), double *x, int n, int m) {
  double g[64] = {0};
  int bad = 0;
  __enzyme_autodiff((void *)f, enzyme_dup, x, g, enzyme_const, n);
  for (int i = 0; i < m; i++) {
    double s = x[i], h = 1e-6;
    x[i] = s + h; double fp = f(x, n);
    x[i] = s - h; double fm = f(x, n);
    x[i] = s;
    double fd = (fp - fm) / (2 * h);
    if (fabs(g[i] - fd) > 1e-6 * (fabs(fd) > 1 ? fabs(fd) : 1)) {
      printf("MISMATCH %s %d: %.12g vs %.12g\n", what, i, g[i], fd);
      bad = 1;
    }
  }
  return bad;
}
"""

LOOPS = r"""
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);

/* a triangular pair loop (j from i + 1): its IV's last value is the bound minus one */
__attribute__((noinline)) double tri(const double *x, int n) {
  double *y = malloc(sizeof(double) * n), s = 0;
  for (int i = 0; i < n; i++) y[i] = sin(x[i]);
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++) s += exp(y[i] * y[j]);
  free(y);
  return s;
}

/* the inner loop only reads x, which nothing writes: it keeps no record, so the outer
 * loop need not keep where that record would be */
__attribute__((noinline)) double empty_inner(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    double t = 0;
    for (int k = 0; k < 2 + i % 3; k++) t += x[k] * x[k];
    s += sin(t) * x[i];
  }
  return s;
}

"""+ FD_CHECK + r"""

int main(void) {
  double x[6] = {0.3, -0.2, 0.5, 0.7, -0.4, 0.1};
  int bad = check("tri", tri, x, 6, 6) | check("empty_inner", empty_inner, x, 6, 6);
  puts(bad ? "FAIL" : "ok");
  return bad;
}
"""


def built_plans(tmp_path, source: str, opt: str) -> dict[str, str]:
    """Build a self-checking C program with ENZYME_BUILD_KEEP, run it (it prints "ok" when
    every gradient matches its central difference), and return its plans by title line."""
    name = f"prog{opt}"
    (tmp_path / f"{name}.c").write_text(source)
    keep = tmp_path / f"keep{opt}"
    exe = os.path.join(os.path.dirname(sys.executable), "enzyme-build")
    proc = subprocess.run([exe, "cc", opt, f"{name}.c", "-o", name, "-lm"], cwd=tmp_path,
                          env=dict(os.environ, ENZYME_BUILD_KEEP=str(keep)), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    run = subprocess.run([str(tmp_path / name)], capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stdout
    text = next(keep.glob("*.ad/cache-plan.txt")).read_text()
    return {p.split("\n", 1)[0]: p for p in text.split("\n\n") if p.strip()}


def test_loop_bookkeeping_left_out_of_records(tmp_path):
    """What a loop nest keeps beyond its values: a triangular loop's exit IV is computed
    from its bound, and an inner loop that keeps nothing costs its outer loop nothing."""
    for opt in ("-O0", "-O2"):
        plans = built_plans(tmp_path, LOOPS, opt)
        tri = plans["cache plan of @diffe_tri (combined mode)"]
        per_iteration = [line for line in tri.splitlines() if line.startswith("static record")]
        assert per_iteration and not any("%ivexit" in line for line in per_iteration), tri
        inner = plans["cache plan of @diffe_empty_inner (combined mode)"]
        # the inner loop's record offset is read nowhere, so no outer iteration keeps it
        unused = re.findall(r"(%static\.off\$\d+)\s+sweep value\s+unused: its loop keeps no record", inner)
        assert unused, inner
        for off in unused:
            assert not re.search(re.escape(off) + r"\s+sweep value\s+kept:", inner), inner
        assert not re.search(r"record of .*\(.*%static\.off", inner), inner


# Float arithmetic on inputs nothing writes, addressed through the index arithmetic of a
# loop nest (GMM's `q[r*d + c] * (x[i*d + c] - mu[k*d + c])`, a flattened `a[(i*n + j)*n + k]`,
# row pointers taken in each loop, four loops deep): the reverse sweep re-reads the inputs
# and redoes the arithmetic; nothing per innermost iteration goes to the tape.
NESTS = r"""
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);

/* GMM's inner product: a triangular loop under two outer loops, (x - mu) rebuilt from inputs */
__attribute__((noinline)) double tri_nest(const double *x, int n) {
  const double *q = x, *mu = x + 8, *p = x + 16;
  double s = 0;
  for (int i = 0; i < n - 1; i++)
    for (int k = 0; k < n - 2; k++)
      for (int r = 0; r < n; r++) {
        double z = 0;
        for (int c = 0; c <= r; c++) z += q[r * n + c - r] * (p[i * n + c] - mu[k * n + c]);
        s += z * z;
      }
  return s;
}

/* one flattened index a[(i*n + j)*m + k] in a three-deep nest */
__attribute__((noinline)) double flat3(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n - 2; i++)
    for (int j = 0; j < n - 2; j++)
      for (int k = 0; k < n; k++) {
        double t = x[(i * n + j) * n + k] - x[j * 3 + k];
        s += t * t * x[i + j];
      }
  return s;
}

/* row pointers taken in each loop of the nest */
__attribute__((noinline)) double rows(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    const double *a = x + i;
    for (int j = 0; j < n - i; j++) {
      const double *b = a + j;
      for (int k = 0; k < i + 1; k++) {
        double t = b[k] * 0.5 - a[k];
        s += t * t;
      }
    }
  }
  return s;
}

/* four loops deep, x[((i*2 + j)*2 + k)*2 + l] */
__attribute__((noinline)) double deep4(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n - 2; i++)
    for (int j = 0; j < n - 2; j++)
      for (int k = 0; k < n - 2; k++)
        for (int l = 0; l < n; l++) {
          double t = x[((i * n + j) * n + k) * n + l] + x[l] * 1.5;
          s += t * t;
        }
  return s;
}

"""+ FD_CHECK + r"""

int main(void) {
  double x[64];
  for (int i = 0; i < 64; i++) x[i] = 0.3 + 0.05 * (i % 11) - 0.01 * (i % 7) * (i % 5);
  int bad = check("tri_nest", tri_nest, x, 4, 64) | check("flat3", flat3, x, 3, 64)
            | check("rows", rows, x, 5, 64) | check("deep4", deep4, x, 2, 64);
  puts(bad ? "FAIL" : "ok");
  return bad;
}
"""

FLOAT_ROW = re.compile(r"^  %\S+\s+%\S+\s+(fsub|fadd|fmul|fneg|load|call @llvm\.fmuladd\.f64)\s+kept", re.M)


def test_values_of_inputs_in_loop_nests_are_rebuilt_not_kept(tmp_path):
    for opt in ("-O0", "-O2"):
        plans = built_plans(tmp_path, NESTS, opt)
        for fn in ("flat3", "rows", "deep4"):
            plan = plans[f"cache plan of @diffe_{fn} (combined mode)"]
            assert not FLOAT_ROW.search(plan), plan
        # the triangular nest keeps only its row sums z (an accumulator: a loop to redo)
        tri = plans["cache plan of @diffe_tri_nest (combined mode)"]
        assert [m.group(1) for m in FLOAT_ROW.finditer(tri)] == ["call @llvm.fmuladd.f64"], tri
