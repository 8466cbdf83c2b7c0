"""Loops that read neighbouring elements: the load of `a[i + 1]` is the next iteration's `a[i]`.

The class: stencils and finite differences (`u[i-1] - 2 u[i] + u[i+1]`, `x[i+1] - x[i]`), the
trapezoid rule, smoothness penalties -- any loop reading an element again one iteration later.
LLVM's GVN keeps the loaded `a[i + 1]` in a register and hands it to the next iteration
through a header phi instead of loading `a[i]` again. In the reverse sweep the phi's adjoint
flows back into that load's adjoint one iteration earlier, and the load's adjoint is added
into shadow memory. Added where the load is reversed, that shadow update waits for a value
the reverse block only finishes at its end (the phi's adjoint): a recurrence through memory
that LLVM's loop vectorizer gives up on, so the reverse of the heat stepper ran scalar while
its primal ran with two lanes. The reverse sweep now adds such loads' adjoints into shadow
memory at the end of their reverse block (`ReverseGenerator._carried_loads`), where the sum is
a first-order recurrence in a register, which the vectorizer handles.

Each member is checked against central differences in reverse and forward mode at -O0, -O2
and with AD before optimization; the stepper's reverse loop must be vectorized, and a block
whose earlier instructions write shadow memory keeps the update in place.
"""
from __future__ import annotations

import re

import pytest

from ad_helpers import FD_HEAD, LEVELS, check_fd_rows, fd_main, fd_rows, vectorized_reverse_loops

# n comes from a volatile so the loops' trip counts are unknown and the values must be kept
PRELUDE = "static volatile int count = 12;\n"

PROGRAMS = {
    # a 3-point stencil time stepper over two buffers swapped every step (reaction term cubic)
    "stencil_ping_pong": PRELUDE + r"""
double f(const double *x) {
  int n = count;
  double *u = malloc(sizeof(double) * n), *next = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) u[i] = x[i % 4] * (1 + 0.1 * i);
  next[0] = u[0]; next[n - 1] = u[n - 1];
  for (int s = 0; s < 5; s++) {
    for (int i = 1; i < n - 1; i++)
      next[i] = u[i] + 0.2 * x[(i + s) % 4] * (u[i - 1] - 2 * u[i] + u[i + 1]) + 0.1 * (u[i] - u[i] * u[i] * u[i]);
    double *t = u; u = next; next = t;
  }
  double e = 0;
  for (int i = 0; i < n; i++) e += u[i] * u[i];
  free(u); free(next);
  return e;
}
""",
    # the trapezoid rule over values the function computed and stored
    "trapezoid": PRELUDE + r"""
double f(const double *x) {
  int n = count;
  double *y = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) y[i] = sin(x[i % 4] * (i + 1) * 0.3) * x[(i + 1) % 4];
  double s = 0;
  for (int i = 0; i + 1 < n; i++) s += 0.5 * (y[i] + y[i + 1]) * (1.0 + 0.01 * i);
  free(y);
  return s * s;
}
""",
    # a smoothness penalty over differences of neighbours of an input-derived array
    "total_variation": PRELUDE + r"""
double f(const double *x) {
  int n = count;
  double *z = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) z[i] = x[i % 4] * x[(i + 2) % 4] + 0.1 * i;
  double s = 0;
  for (int i = 1; i < n; i++) { double d = z[i] - z[i - 1]; s += sqrt(d * d + 0.01); }
  free(z);
  return s;
}
""",
    # an in-place update carrying the old left neighbour in a scalar (a second-order chain)
    "in_place_stencil": PRELUDE + r"""
static void step(int n, const double *x, double *u) {
  double left = u[0];
  for (int i = 1; i < n - 1; i++) {
    double mid = u[i];
    u[i] = mid + 0.2 * x[i % 4] * (left - 2 * mid + u[i + 1]) + 0.05 * mid * mid;
    left = mid;
  }
}
double f(const double *x) {
  int n = count;
  double *u = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) u[i] = x[(i + 1) % 4] + 0.05 * i;
  for (int s = 0; s < 4; s++) step(n, x, u);
  double e = 0;
  for (int i = 0; i < n; i++) e += u[i] * u[i] * u[i];
  free(u);
  return e;
}
""",
    # neighbours read through the function's arguments: second differences of x itself,
    # written back in place into a scratch copy between two passes
    "second_differences": PRELUDE + r"""
double f(const double *x) {
  int n = count;
  double *a = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) a[i] = x[i % 4] * cos(0.2 * i);
  double s = 0;
  for (int pass = 0; pass < 2; pass++) {
    for (int i = 1; i + 1 < n; i++) s += (a[i - 1] - 2 * a[i] + a[i + 1]) * (a[i - 1] - 2 * a[i] + a[i + 1]);
    for (int i = 0; i < n; i++) a[i] = a[i] * (1 + 0.1 * a[i]);
  }
  free(a);
  return s;
}
""",
}


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_loops_reading_neighbours(name, level, tmp_path):
    flags, env = LEVELS[level]
    check_fd_rows(fd_rows(tmp_path, FD_HEAD + PROGRAMS[name] + fd_main(4), flags, env), 4)


def _function(text: str, name: str) -> str:
    m = re.search(rf"^define [^\n]*@{re.escape(name)}\(.*?^}}", text, re.M | re.S)
    assert m, name
    return m.group(0)


def carried_load_loops(ad_input: str) -> set[str]:
    """Labels of the loop blocks of the AD input with a header phi whose value from the
    block is a load made in it (the class of this file)."""
    out = set()
    for block in re.finditer(r"^([\w.$\"-]+):.*?(?=^[\w.$\"-]+:|^}|\Z)", ad_input, re.M | re.S):
        label, body = block.group(1).strip('"'), block.group(0)
        loads = set(re.findall(r"^\s*(%[\w.$]+) = load double", body, re.M))
        for phi in re.finditer(r"= phi double (.*)$", ad_input, re.M):
            if any(v in loads and b == label for v, b in re.findall(r"\[ (%[\w.$]+), %([\w.$]+) \]", phi.group(1))):
                out.add(label)
    return out


def test_stencil_reverse_loop_is_vectorized(tmp_path):
    keep = tmp_path / "keep"
    fd_rows(tmp_path, FD_HEAD + PROGRAMS["stencil_ping_pong"] + fd_main(4), ["-O2"], {"ENZYME_BUILD_KEEP": str(keep)})
    loops = carried_load_loops((keep / "p.ad" / "ad-input.ll").read_text())
    assert loops, "the stepper's loop no longer carries a load through a phi: the test needs a new program"
    vectorized = vectorized_reverse_loops((keep / "p.post-ad.ll").read_text())
    assert any(v.strip('"').startswith(f"rev${label}.") or v.strip('"') == f"rev${label}"
               for v in vectorized for label in loops), (loops, vectorized)


IR = r"""
define double @g(ptr %a, ptr %b, i64 %n) {
entry:
  %a0 = load double, ptr %a, align 8
  br label %loop
loop:
  %prev = phi double [ %a0, %entry ], [ %next, %loop ]
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %s = phi double [ 0.0, %entry ], [ %s1, %loop ]
  %bp = getelementptr inbounds double, ptr %b, i64 %i
  %BSTORE
  %i1 = add nuw nsw i64 %i, 1
  %np = getelementptr inbounds double, ptr %a, i64 %i1
  %next = load double, ptr %np, align 8
  %d = fsub double %next, %prev
  %sq = fmul double %d, %d
  %s1 = fadd double %s, %sq
  %done = icmp eq i64 %i1, %n
  br i1 %done, label %exit, label %loop
exit:
  ret double %s1
}
"""


def _reverse_of_loop(ir_text: str) -> str:
    from enzyme_build import llvm
    from enzyme_build.ad.driver import differentiate_module
    module = ir_text + """
@enzyme_const = external global i32
define double @caller(ptr %a, ptr %da, ptr %b, ptr %db, i64 %n) {
entry:
  %r = call double (ptr, ...) @__enzyme_autodiff(ptr @g, ptr %a, ptr %da, ptr %b, ptr %db, ptr @enzyme_const, i64 %n)
  ret double %r
}
declare double @__enzyme_autodiff(ptr, ...)
"""
    out = differentiate_module(module)
    llvm.verify(llvm.parse_assembly(out, "carried-loads"), generated=True)
    fn = _function(out, "diffe_g")
    return re.search(r"^rev\$loop:.*?(?=^\S)", fn, re.M | re.S).group(0)


def test_carried_load_update_moves_after_the_phi_adjoint():
    """IR in, IR out: in the reverse of the loop, the shadow update of the load the next
    iteration reads through the phi comes after the phi's adjoint is taken (its slot zeroed);
    with a store to shadowed memory before the load in the block it stays where the load is."""
    plain = _reverse_of_loop(IR.replace("%BSTORE", "%bx = load double, ptr %bp, align 8"))
    lines = plain.splitlines()
    zero_prev = next(k for k, l in enumerate(lines) if re.search(r"store double 0x8000000000000000, ptr %prev\$d", l))
    shadow_stores = [k for k, l in enumerate(lines) if re.match(r"\s*store double %dm\$\d+, ptr %rc\$\d+", l)]
    assert shadow_stores and shadow_stores[-1] > zero_prev, plain

    written = _reverse_of_loop(IR.replace("%BSTORE", "store double %prev, ptr %bp, align 8"))
    lines = written.splitlines()
    zero_prev = next(k for k, l in enumerate(lines) if re.search(r"store double 0x8000000000000000, ptr %prev\$d", l))
    shadow_stores = [k for k, l in enumerate(lines) if re.match(r"\s*store double %dm\$\d+, ptr %rc\$\d+", l)]
    assert shadow_stores and all(k < zero_prev for k in shadow_stores), written
