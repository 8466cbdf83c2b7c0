"""In-place sweeps: `a[i] += g(a[i + 1], ...)` over an array updated as the loop goes.

The class: one-sided relaxation and smoothing sweeps, explicit updates written in place, a
row of a matrix updated from its right neighbour -- any loop whose store goes to the element
it reads (`a[i]`) and which also reads an element it has not written yet (`a[i + 1]`).
Clang's IR indexes `a[i]` and `a[i + 1]` through two induction phis (`i` and `i + 1`) that
the optimizer keeps apart. The reverse of such an iteration loads the adjoint of `a[i]`,
zeroes the cell, adds to the adjoint of `a[i + 1]`, and adds the old value's adjoint back
into the zeroed cell. Two things kept that reverse loop scalar:

- each IV was replayed in the reverse sweep from a counter slot of its own, so to alias
  analysis the two reverse indices were unrelated: the zeroing store could not be dropped
  and the cell's update looked like a dependence on the next reverse iteration. The second
  IV is now replayed as the first plus the constant distance (`CachePlanner.derive_iv`).
- the adjoint added back into the zeroed cell was `+0.0 + ds`, which the optimizer may not
  fold to `ds` (it differs for ds = -0.0); shadow memory accumulations now carry `nsz`, so
  the pair becomes a store of the value just loaded, which is dropped.

A third: when the update does not just add to `a[i]` (a stepper, `u[i] = u[i] + r*(...)`)
or the optimizer carries the loaded `a[i + 1]` to the next iteration in a register (the
`restrict` helper), the next reverse iteration reads the cell this one wrote, a store-to-load
forwarding dependence the vectorizer gives up on; loop-load elimination turns it into a
recurrence in a register, but in LLVM's pipeline it runs after the vectorizer. The post-AD
pipeline now runs the loop vectorizer a second time (`backend.LATE_VECTORIZE`).

Each member is checked against central differences in reverse and forward mode at -O0, -O2
and with AD before optimization; at -O2 the reverse of every in-place loop must be
vectorized (before these changes that held for rows_of_matrix alone; without the second
vectorizer round, sweep and square_of_neighbour pass, restrict_helper and stepper fail). The IR test
checks the replay itself on a hand-written loop.

Not in the class handled: an update whose reverse adds into the neighbour's cell before it
writes its own (a sweep running downwards, `a[i] = g(a[i], a[i - 1])`): after load
elimination the vector loop would store the lanes in the wrong order, and it stays scalar.
"""
from __future__ import annotations

import re

import pytest

from ad_helpers import (FD_HEAD, LEVELS, check_program_gradient, fd_main, fd_rows, function_body,
                        vectorized_reverse_loops)

# n comes from a volatile so the loops' trip counts are unknown and the values must be kept
PRELUDE = "static volatile int count = 40;\n"

PROGRAMS = {
    # a relaxation sweep repeated a few times on a malloc'd array (the step count constant:
    # the optimizer unrolls it into three copies of the loop)
    "sweep": PRELUDE + r"""
double f(const double *x) {
  int n = count;
  double *a = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) a[i] = x[i % 4] * (1 + 0.01 * i);
  for (int s = 0; s < 3; s++)
    for (int i = 0; i + 1 < n; i++) a[i] = a[i] + 0.3 * x[(s + 1) % 4] * a[i + 1];
  double e = 0;
  for (int i = 0; i < n; i++) e += a[i] * a[i];
  free(a);
  return e;
}
""",
    # the neighbour enters nonlinearly
    "square_of_neighbour": PRELUDE + r"""
double f(const double *x) {
  int n = count;
  double *a = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) a[i] = x[i % 4] * (0.5 + 0.01 * i);
  for (int s = 0; s < 2; s++)
    for (int i = 0; i + 1 < n; i++) a[i] += 0.1 * a[i + 1] * a[i + 1];
  double e = 0;
  for (int i = 0; i < n; i++) e += a[i] * x[(i + 1) % 4];
  free(a);
  return e;
}
""",
    # through a helper taking restrict pointers, weights from a second array
    "restrict_helper": PRELUDE + r"""
static void sweep(double *restrict a, const double *restrict w, int n) {
  for (int i = 0; i < n - 1; i++) a[i] += w[i] * a[i + 1];
}
double f(const double *x) {
  int n = count;
  double *a = malloc(sizeof(double) * n), *w = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) { a[i] = x[i % 4] + 0.1 * i; w[i] = 0.2 * x[(i + 2) % 4]; }
  for (int s = 0; s < 3; s++) sweep(a, w, n);
  double e = 0;
  for (int i = 0; i < n; i++) e += a[i] * a[i];
  free(a); free(w);
  return e;
}
""",
    # an explicit heat stepper updating its state in place (the benchmark's heat_step): a
    # step function called a number of times known only at run time, the old left
    # neighbour carried in a scalar, a cubic reaction term. Its reverse zeroes the shadow
    # of u[i] and the next reverse iteration reads that cell as the adjoint of u[i + 1]: the
    # vectorizer sees a store-to-load forwarding dependence until loop-load elimination
    # has made it a recurrence in a register, which in LLVM's pipeline runs after the
    # vectorizer (hence backend.LATE_VECTORIZE)
    "stepper": PRELUDE + r"""
static volatile int nsteps = 5;
static double flux(double left, double mid, double right) { return left - 2 * mid + right; }
void step(int n, double r, const double *kappa, double *u) {
  double left = u[0];
  for (int i = 1; i < n - 1; i++) {
    double mid = u[i];
    u[i] = mid + r * kappa[i] * flux(left, mid, u[i + 1]) + 0.5 * r * (mid - mid * mid * mid);
    left = mid;
  }
}
double f(const double *x) {
  int n = count, steps = nsteps;
  double *u = malloc(sizeof(double) * n), *kappa = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) { u[i] = x[(i + 1) % 4] + 0.05 * i; kappa[i] = 0.5 + 0.1 * x[i % 4]; }
  for (int s = 0; s < steps; s++) step(n, 0.2, kappa, u);
  double e = 0;
  for (int i = 0; i < n; i++) e += 0.5 * u[i] * u[i];
  free(u); free(kappa);
  return e;
}
""",
    # every row of a matrix swept from its right neighbour (a nest)
    "rows_of_matrix": PRELUDE + r"""
double f(const double *x) {
  int n = count, m = 8;
  double *A = malloc(sizeof(double) * n * m);
  for (int k = 0; k < n * m; k++) A[k] = x[k % 4] * (1 + 0.001 * k);
  for (int r = 0; r < n; r++)
    for (int c = 0; c + 1 < m; c++) A[r * m + c] += 0.5 * x[r % 4] * A[r * m + c + 1];
  double e = 0;
  for (int k = 0; k < n * m; k++) e += A[k] * A[k];
  free(A);
  return e;
}
""",
}


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_in_place_sweeps(name, level, tmp_path):
    check_program_gradient(tmp_path, PROGRAMS[name], level)


def in_place_loops(ad_input: str) -> set[str]:
    """Labels of the self-looping blocks of (a function of) the AD input that store a double into the array
    they load a double from (the same pointer, or GEPs off the same base: with `restrict`
    the optimizer carries the loaded `a[i + 1]` to the next iteration in a phi, and the
    block loads `a[i + 1]` and stores `a[i]`)."""
    out = set()
    for block in re.finditer(r"^([\w.$\"-]+):.*?(?=^[\w.$\"-]+:|^}|\Z)", ad_input, re.M | re.S):
        label, body = block.group(1).strip('"'), block.group(0)
        base = dict(re.findall(r"^\s*(%[\w.$]+) = getelementptr [^,]*, ptr (%[\w.$]+)", body, re.M))
        loaded = {base.get(p, p) for p in re.findall(r"= load double, ptr (%[\w.$]+)", body)}
        stored = {base.get(p, p) for p in re.findall(r"^\s*store double %[\w.$]+, ptr (%[\w.$]+)", body, re.M)}
        if loaded & stored and re.search(rf"label %{re.escape(label)}\b", body.split("\n", 1)[1]):
            out.add(label)
    return out


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_reverse_of_in_place_loop_is_vectorized(name, tmp_path):
    keep = tmp_path / "keep"
    fd_rows(tmp_path, FD_HEAD + PROGRAMS[name] + fd_main(4), ["-O2"], {"ENZYME_BUILD_KEEP": str(keep)})
    loops = in_place_loops(function_body((keep / "p.ad" / "ad-input.ll").read_text(), "f"))
    assert loops, "no in-place loop left in the AD input: the test needs a new program"
    vectorized = {v.strip('"') for v in vectorized_reverse_loops((keep / "p.post-ad.ll").read_text())}
    missing = [label for label in loops
               if not any(v == f"rev${label}" or v.startswith(f"rev${label}.") for v in vectorized)]
    assert not missing, (sorted(loops), sorted(vectorized))


# a loop indexing `a[i]` and `a[i + 1]` through two IVs, as clang's IR does
IR = r"""
define double @g(ptr %a, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %j = phi i64 [ 1, %entry ], [ %j1, %loop ]
  %s = phi double [ 0.0, %entry ], [ %s1, %loop ]
  %p = getelementptr inbounds double, ptr %a, i64 %i
  %q = getelementptr inbounds double, ptr %a, i64 %j
  %x = load double, ptr %p, align 8
  %y = load double, ptr %q, align 8
  %t = fmul double %y, 3.0e-1
  %u = fadd double %x, %t
  store double %u, ptr %p, align 8
  %s1 = fadd double %s, %u
  %i1 = add nuw nsw i64 %i, 1
  %j1 = add nuw nsw i64 %j, 1
  %done = icmp eq i64 %j1, %n
  br i1 %done, label %exit, label %loop
exit:
  ret double %s1
}
@enzyme_const = external global i32
define double @caller(ptr %a, ptr %da, i64 %n) {
entry:
  %r = call double (ptr, ...) @__enzyme_autodiff(ptr @g, ptr %a, ptr %da, ptr @enzyme_const, i64 %n)
  ret double %r
}
declare double @__enzyme_autodiff(ptr, ...)
"""


def test_second_iv_is_replayed_from_the_first():
    """One counter slot for the loop (the tested IV's, `j`); `i` comes back as `j - 1` (nsw:
    both steps are)."""
    from enzyme_build import llvm
    from enzyme_build.ad.driver import differentiate_module
    out = differentiate_module(IR)
    llvm.verify(llvm.parse_assembly(out, "in-place"), generated=True)
    fn = function_body(out, "diffe_g")
    slots = set(re.findall(r"(%[\w.$]+\$ivslot) = alloca", fn))
    assert len(slots) == 1, slots
    rev = re.search(r"^rev\$loop:.*?(?=^\S)", fn, re.M | re.S).group(0)
    counter = re.search(r"(%[\w.$]+) = load i64, ptr %[\w.$]+\$ivslot", rev).group(1)
    assert slots == {"%j$ivslot"}, slots
    assert re.search(rf"= add nsw i64 {re.escape(counter)}, -1\b", rev), rev
