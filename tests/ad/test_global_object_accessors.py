"""Objects reached through accessors that return a reference into global memory.

The class: parameters or models kept in global objects (`static A *g_a`, a table of object
pointers, a `std::unique_ptr` / `std::vector<std::unique_ptr<...>>` holding polymorphic
models) that the differentiated function reaches through a function returning a reference
to the pointer (`A **slot()`, `std::unique_ptr::operator->`, `std::vector::operator[]`) and
then hands to another function together with active data. When those functions stay calls
(AD before optimization; `noinline` accessors), the accessor's derived piece was asked for
a shadow of the pointer it loads from global memory, and loaded it from the primal memory,
the only memory there is: reverse mode then accumulated the adjoint of the object's fields
into the object itself (the gradient right, the model's parameter changed behind the
program's back), and forward mode referred to a shadow it never defined (an internal error).
A loaded pointer now has a shadow only when the memory it is loaded from has one
(analysis/activity.py: `give_shadow`); the object is constant data, as it is when the
accessors are inlined.

Each program is checked in reverse and forward mode against central differences at -O0,
-O2 and with AD before optimization, and must leave the global objects unchanged.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ad_helpers import FD_HEAD, LEVELS, check_fd_rows

C_MAIN = r"""
int main(void) {
  setup();
  double before = checksum();
  double x[4] = {0.5, -1.25, 1.5, 0.75}, g[4] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, g);
  for (int i = 0; i < 4; i++) {
    double e[4] = {0}, xp[4], xm[4];
    e[i] = 1;
    double t = __enzyme_fwddiff((void *)f, enzyme_dup, x, e);
    for (int k = 0; k < 4; k++) { xp[k] = x[k]; xm[k] = x[k]; }
    xp[i] += 1e-6; xm[i] -= 1e-6;
    printf("%.15g %.15g %.15g\n", g[i], t, (f(xp) - f(xm)) / 2e-6);
  }
  return checksum() != before;   /* the objects are constant data: unchanged */
}
"""

C_HEAD = FD_HEAD

PROGRAMS = {
    # a global object pointer reached through a function returning its address
    "pointer_slot": (C_HEAD + r"""
typedef struct { double k, c; } A;
static A *g_a;
__attribute__((noinline)) A **slot(A **p) { return p; }
__attribute__((noinline)) A *get(void) { return *slot(&g_a); }
__attribute__((noinline)) double eval(const A *a, double x) { return a->k * x * x + a->c * sin(x); }
double f(const double *x) { return eval(get(), x[0]) + eval(get(), x[1] * x[2]) * x[3]; }
static void setup(void) { g_a = malloc(sizeof(A)); g_a->k = 1.5; g_a->c = -0.75; }
static double checksum(void) { return g_a->k * 3 + g_a->c; }
""" + C_MAIN, False),
    # a table of model pointers, one chosen per term through an accessor
    "object_table": (C_HEAD + r"""
typedef struct { double w[3]; } Model;
static Model *models[3];
__attribute__((noinline)) Model **entry(int i) { return &models[i % 3]; }
__attribute__((noinline)) double apply(const Model *m, const double *x) {
  return m->w[0] * x[0] * x[1] + m->w[1] * cos(x[2]) + m->w[2] * x[3] * x[3];
}
double f(const double *x) {
  double s = 0;
  for (int i = 0; i < 5; i++) s += apply(*entry(i), x) * (1 + 0.1 * i);
  return s;
}
static void setup(void) {
  for (int i = 0; i < 3; i++) { models[i] = malloc(sizeof(Model)); for (int k = 0; k < 3; k++) models[i]->w[k] = 0.5 + i - 0.25 * k; }
}
static double checksum(void) {
  double s = 0;
  for (int i = 0; i < 3; i++) for (int k = 0; k < 3; k++) s += models[i]->w[k] * (1 + i + 3 * k);
  return s;
}
""" + C_MAIN, False),
    # C++: polymorphic basis functions held by a global vector of unique_ptr
    "virtual_models": (r"""
#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>
extern int enzyme_dup, enzyme_const;
extern "C" void __enzyme_autodiff(void *, ...);
extern "C" double __enzyme_fwddiff(void *, ...);
struct Basis { virtual ~Basis() = default; virtual double eval(double t) const = 0; double scale = 1; };
struct Poly : Basis { double c[3]; double eval(double t) const override { return scale * (c[0] + t * (c[1] + t * c[2])); } };
struct Gauss : Basis { double mu, s; double eval(double t) const override { return scale * std::exp(-(t - mu) * (t - mu) / s); } };
static std::vector<std::unique_ptr<Basis>> BASIS;
static void setup() {
  auto p = std::make_unique<Poly>(); p->c[0] = 0.5; p->c[1] = -0.25; p->c[2] = 0.125;
  auto g = std::make_unique<Gauss>(); g->mu = 0.3; g->s = 0.8; g->scale = 1.5;
  BASIS.push_back(std::move(p)); BASIS.push_back(std::move(g));
}
static double checksum() { double s = 0; for (auto &b : BASIS) s += b->eval(0.7) + b->scale; return s; }
double f(const double *x) {
  double s = 0;
  for (int i = 0; i < 4; i++)
    for (auto &b : BASIS) s += x[i] * b->eval(x[(i + 1) % 4]);
  return s;
}
""" + C_MAIN.replace("printf(", "std::printf("), True),
}


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_global_object_accessor(name, level, tmp_path):
    source, cxx = PROGRAMS[name]
    flags, env = LEVELS[level]
    src, exe = os.path.join(str(tmp_path), "p.cc" if cxx else "p.c"), os.path.join(str(tmp_path), "p")
    with open(src, "w") as fh:
        fh.write(source)
    cli = os.path.join(os.path.dirname(sys.executable), "enzyme-build")
    r = subprocess.run([cli, "c++" if cxx else "cc", *flags, src, "-o", exe, "-lm"], capture_output=True,
                       text=True, timeout=600, env={**os.environ, **env})
    assert r.returncode == 0, r.stderr
    out = subprocess.run([exe], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, "the global objects changed: " + out.stdout + out.stderr
    check_fd_rows([[float(v) for v in line.split()] for line in out.stdout.splitlines()], 4)
