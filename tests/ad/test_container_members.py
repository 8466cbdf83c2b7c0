"""Copies of C++ objects whose members are containers and scalars. The class: a defaulted
copy constructor or assignment of a class holding std::vector<double> members and plain
fields (tk::spline, a polynomial with its coefficients, a solver state), called out of line
or by std::vector<T> when it grows or copies. Built with optimization, the element copy
(`memmove` from the source vector's storage into the new one) had no access around it that
typed its bytes, and the build was refused ("a memcpy of data of unknown type"). Now the
pointers' own C types decide when nothing else does: clang tags a `double *` load or store
with its pointee ("p1 double"; analysis/types.py: _pointee_kinds), and a copy of the
trailing scalar fields is laid out from the struct it spans (_field_range_record).

Also here, a silent error found on the way: a copy of a packed record (`#pragma pack(4)`
`{double; int, int, int; double, double; bool}`) was taken as a run of doubles, whose
words cut the fields at offsets 20 and 28 in two; copied twice from the same record the
gradient was wrong. Such a copy now moves each field's adjoint where the copy's
`!tbaa.struct` puts it (_tbaa_struct_record); without a type tag or a declared layout it
is refused.

Reverse and forward derivatives against central differences at -O0 (containers of
objects need -O1 for the type tags), -O2, -O3 and with AD before optimization.
"""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from hcheck_run import ENZYME_BUILD, HCHECK, build_and_run_hcheck, checks_passed, loss_check_main

CONFIGS = [("-O0", {}), ("-O2", {}), ("-O3", {}), ("-O2", {"ENZYME_BUILD_AD_BEFORE_OPT": "1"})]
CONFIG_IDS = ["O0", "O2", "O3", "ad-before-opt"]

HEAD = r"""
#include "hcheck.h"
#include <cmath>
#include <cstdio>
#include <vector>
extern "C" { extern int enzyme_dup, enzyme_const; double __enzyme_autodiff(void *, ...); double __enzyme_fwddiff(void *, ...); }
#define N 3
"""

CHECK = loss_check_main((1.5, 2.0, -1.0))

PROGRAMS = {
    "class_copy": r"""
struct S { std::vector<double> v; double c; int kind; };
__attribute__((noinline)) S dup(const S &s) { return s; }
double loss(const double *x) {
  S a{std::vector<double>(x, x + 3), x[0], 1};
  S b = dup(a);
  return b.v[0] * b.v[1] + b.v[2] * b.c * b.kind;
}
""",
    "vector_of_objects": r"""
struct Poly { std::vector<double> coef; double scale; int degree; };
double loss(const double *x) {
  std::vector<Poly> ps;
  Poly p{std::vector<double>(x, x + 3), 0.5, 2};
  ps.push_back(p);
  p.scale = x[1];
  ps.push_back(p);
  ps.push_back(ps[0]);
  double s = 0;
  for (const Poly &q : ps) {
    double t = 0.7, v = 0;
    for (int k = q.degree; k >= 0; k--) v = v * t + q.coef[k];
    s += q.scale * v * v;
  }
  return s;
}
""",
    "scalar_tail": r"""
class Fit {
 public:
  std::vector<double> xs, ys;
  double c0;
  int kind, left, right;
  double lv, rv;
  bool monotone;
  Fit(const double *x) : xs(x, x + 3), ys(3), c0(x[0]), kind(1), left(2), right(3), lv(x[1]), rv(x[2] * x[2]), monotone(true) {
    for (int k = 0; k < 3; k++) ys[k] = std::sin(xs[k]);
  }
  __attribute__((noinline)) Fit(const Fit &o) = default;
  double eval(double t) const { double s = c0 * t + (monotone ? lv : rv); for (int k = 0; k < 3; k++) s += ys[k] * xs[k] * t; return s * (kind + left); }
};
double loss(const double *x) {
  Fit a(x);
  Fit b(a);
  std::vector<Fit> fits{a, b};
  return b.eval(0.5) + fits[1].eval(2.0) * a.rv;
}
""",
    "assign": r"""
struct State { std::vector<double> u; double t; };
__attribute__((noinline)) void copy_into(State &dst, const State &src) { dst = src; }
double loss(const double *x) {
  State a{std::vector<double>(x, x + 3), x[2]}, b{std::vector<double>(3, 0.0), 0};
  copy_into(b, a);
  for (double &v : b.u) v = v * v + b.t;
  return b.u[0] + b.u[1] * b.u[2];
}
""",
    "packed_twice": r"""
#pragma pack(push, 4)
struct Fit { double c0; int kind, left, right; double lv, rv; bool monotone; };
#pragma pack(pop)
__attribute__((noinline)) void copy(Fit *d, const Fit *s) { *d = *s; }
double loss(const double *x) {
  Fit a{x[0], 1, 2, 3, x[1], x[2] * x[2], true}, b, c;
  copy(&b, &a);
  copy(&c, &a);
  return b.c0 * b.lv * (b.kind + b.left) + b.rv * (b.monotone ? 2.0 : 1.0) + c.lv * c.rv * c.c0;
}
""",
}

# without type tags (-O0) the element copy inside std::vector<Poly>::push_back is still refused
CASES = [(name, opt, env) for name in sorted(PROGRAMS) for opt, env in CONFIGS
         if not (name == "vector_of_objects" and opt == "-O0")]


@pytest.mark.parametrize("name,opt,env", CASES,
                         ids=[f"{n}-{CONFIG_IDS[CONFIGS.index((o, e))]}" for n, o, e in CASES])
def test_objects_with_container_members(tmp_path, name, opt, env):
    source = HEAD + PROGRAMS[name] + CHECK
    assert checks_passed(build_and_run_hcheck(tmp_path / name, source, cxx=True, opt=opt, env_extra=env)) == 6


# the scalar_tail class under `#pragma pack(4)`: its doubles at offsets 68 and 76
PACKED_WITH_CONTAINERS = HEAD + "#pragma pack(push, 4)\n" + PROGRAMS["scalar_tail"] + "\n#pragma pack(pop)\n" + CHECK


def test_a_packed_record_copied_without_layout_is_refused(tmp_path):
    """`#pragma pack(4)` on a class with vector members: the copy of its scalar fields has
    neither a type tag nor a declared type; taken as doubles it was silently wrong."""
    work = tmp_path / "w"
    os.makedirs(work)
    shutil.copy(HCHECK, work)
    (work / "prog.cc").write_text(PACKED_WITH_CONTAINERS)
    build = subprocess.run([ENZYME_BUILD, "c++", "-O2", "-I.", "prog.cc", "-o", "prog"], cwd=work,
                           capture_output=True, text=True, timeout=300)
    assert build.returncode == 1 and not (work / "prog").exists(), build.stderr
    assert "cannot differentiate a copy of a packed record" in build.stderr, build.stderr
    assert "Traceback" not in build.stderr
