"""Objects built through chains of library wrapper constructors. The class: a value made
by a factory and returned inside std::optional, std::tuple, a std::unique_ptr or a
std::variant, whose fields reach their final place through a move constructor called
several wrapper levels below the function that stored them (std::optional's payload is
built five calls down: `_Optional_base` -> `_Optional_payload` -> `_Storage` -> the move
constructor's `memcpy` of the fields). With AD before optimization those constructors stay
calls; the memory type analysis looked four callers up, and not across an `invoke`, found
nothing at the copied bytes and took the object's vtable pointer (stored at offset 0, not
copied) for what the copy moved: the reverse gradient through a std::optional<Filter> with a
virtual method was 0, silently (biquad-filters' factory style). Now the analysis follows
callers through `invoke`, and a constant-length copy asks the callers what they know at
exactly its bytes, up to ten wrapper levels (analysis/memtypes.py: caller_range_kinds).

Each program checks reverse and forward derivatives against central differences at -O0,
-O2 and with AD before optimization (std::visit's variadic helper is refused there).
"""
from __future__ import annotations

import pytest
from hcheck_run import build_and_run_hcheck, checks_passed, loss_check_main

CONFIGS = [("-O0", {}), ("-O2", {}), ("-O2", {"ENZYME_BUILD_AD_BEFORE_OPT": "1"})]
CONFIG_IDS = ["O0", "O2", "ad-before-opt"]

HEAD = r"""
#include "hcheck.h"
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <tuple>
#include <variant>
#include <vector>
extern "C" { extern int enzyme_dup, enzyme_const; double __enzyme_autodiff(void *, ...); double __enzyme_fwddiff(void *, ...); }
#define N 2
"""

CHECK = loss_check_main((0.3, 1.7))

PROGRAMS = {
    "optional_virtual": r"""
struct Filter {
  virtual ~Filter() = default;
  virtual void process(double &s) { s = b0 * s + a1 * y1; y1 = s; }
  double b0, a1, y1;
};
static std::optional<Filter> create(double fc, double q) {
  if (q <= 0) return std::nullopt;
  Filter f; f.b0 = fc; f.a1 = q; f.y1 = 0; return f;
}
double loss(const double *p) {
  auto lp = create(p[0], p[1]);
  double s = 1, acc = 0;
  for (int k = 0; k < 4; k++) { lp->process(s); acc += s; s = 1; }
  return acc;
}
""",
    "optional_plain": r"""
struct Params { double a, b; int n; };
__attribute__((noinline)) static std::optional<Params> parse(const double *p) {
  if (p[0] < -10) return {};
  return Params{p[0], p[1] * p[1], 3};
}
double loss(const double *p) {
  std::optional<Params> q = parse(p);
  double s = 0;
  for (int k = 0; k < q->n; k++) s += std::sin(q->a * k) * q->b;
  return s;
}
""",
    "tuple_object": r"""
struct Body { double m, x; };
__attribute__((noinline)) static std::tuple<Body, double, int> make(const double *p) { return {Body{p[0], p[1]}, p[0] * p[1], 2}; }
double loss(const double *p) {
  auto [b, e, n] = make(p);
  return b.m * b.x * n + std::exp(e);
}
""",
    "unique_virtual": r"""
struct Shape { virtual ~Shape() = default; virtual double area() const = 0; };
struct Circle : Shape { double r; explicit Circle(double r) : r(r) {} double area() const override { return 3.14159 * r * r; } };
struct Rect : Shape { double w, h; Rect(double w, double h) : w(w), h(h) {} double area() const override { return w * h; } };
double loss(const double *p) {
  std::vector<std::unique_ptr<Shape>> shapes;
  shapes.push_back(std::make_unique<Circle>(p[0]));
  shapes.push_back(std::make_unique<Rect>(p[0], p[1]));
  double s = 0;
  for (auto &sh : shapes) s += sh->area();
  return s;
}
""",
    "variant_visit": r"""
struct Sq { double a; }; struct Ci { double r; };
using Sh = std::variant<Sq, Ci>;
struct Area { double operator()(const Sq &s) const { return s.a * s.a; } double operator()(const Ci &c) const { return 3.0 * c.r * c.r; } };
double loss(const double *p) {
  Sh shapes[2] = {Sq{p[0]}, Ci{p[1]}};
  double s = 0;
  for (auto &sh : shapes) s += std::visit(Area{}, sh);
  return s;
}
""",
}


CASES = [(name, opt, env) for name in sorted(PROGRAMS) for opt, env in CONFIGS
         if not (name == "variant_visit" and env)]   # std::visit's variadic lambda: refused there


@pytest.mark.parametrize("name,opt,env", CASES,
                         ids=[f"{n}-{CONFIG_IDS[CONFIGS.index((o, e))]}" for n, o, e in CASES])
def test_objects_through_wrapper_constructors(tmp_path, name, opt, env):
    source = HEAD + PROGRAMS[name] + CHECK
    assert checks_passed(build_and_run_hcheck(tmp_path / name, source, cxx=True, opt=opt, env_extra=env,
                                              flags=("-std=c++17",))) == 4
