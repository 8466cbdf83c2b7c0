"""Enzyme's C++ interface, `<enzyme/enzyme>` (enzyme_build/include/enzyme/enzyme), in programs
built with `enzyme-build c++` and checked against closed forms."""
from __future__ import annotations

import math

import pytest

from custom_helpers import ENZYME_BUILD, run, write

PROGRAM = r"""
#include <cmath>
#include <cstdio>
#include <vector>
#include <enzyme/enzyme>

double square(double x) { return x * x; }
double f(double x, const double *v, double *out, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += v[i] * x;
  *out = s;
  return std::sin(x) * s;
}
double g(double a, float b) { return a * a * b; }
double sum_sq(const std::vector<double> &v) { double s = 0; for (double x : v) s += x * x; return s; }
void scale(double *y, const double *x, double k) { for (int i = 0; i < 2; i++) y[i] = k * x[i] * x[i]; }

int main() {
  // reverse: the adjoints of the Active arguments, in a tuple inside a tuple
  auto r = enzyme::autodiff<enzyme::Reverse>(square, enzyme::Active<double>(3.0));
  std::printf("%.17g\n", enzyme::get<0>(enzyme::get<0>(r)));
  double v[3] = {1, 2, 3}, dv[3] = {0, 0, 0}, out = 0, dout = 0;
  auto r2 = enzyme::autodiff<enzyme::Reverse>(f, enzyme::Active<double>(0.5), enzyme::Duplicated<const double *>(v, dv),
                                              enzyme::Duplicated<double *>(&out, &dout), enzyme::Const<int>(3));
  std::printf("%.17g %.17g %.17g %.17g %.17g\n", enzyme::get<0>(enzyme::get<0>(r2)), dv[0], dv[1], dv[2], out);
  auto r3 = enzyme::autodiff<enzyme::Reverse>(g, enzyme::Active<double>(2.0), enzyme::Active<float>(3.0f));
  std::printf("%.17g %.17g\n", enzyme::get<0>(enzyme::get<0>(r3)), (double)enzyme::get<1>(enzyme::get<0>(r3)));
  // reverse with the primal result after the adjoints
  auto r4 = enzyme::autodiff<enzyme::ReverseWithPrimal>(square, enzyme::Active<double>(3.0));
  std::printf("%.17g %.17g\n", enzyme::get<0>(enzyme::get<0>(r4)), enzyme::get<1>(r4));
  // forward: the tangent of the result
  auto t = enzyme::autodiff<enzyme::Forward>(square, enzyme::Duplicated<double>(3.0, 1.0));
  std::printf("%.17g\n", enzyme::get<0>(t));
  auto t2 = enzyme::autodiff<enzyme::Forward, enzyme::DuplicatedNoNeed<double>>(
      f, enzyme::Duplicated<double>(0.5, 1.0), enzyme::Const<const double *>(v), enzyme::Duplicated<double *>(&out, &dout),
      enzyme::Const<int>(3));
  std::printf("%.17g %.17g\n", enzyme::get<0>(t2), dout);
  // a lambda capturing a constant
  double k = 2.0;
  auto cube = [k](double x) { return k * x * x * x; };
  auto r5 = enzyme::autodiff<enzyme::Reverse>(cube, enzyme::Active<double>(2.0));
  std::printf("%.17g\n", enzyme::get<0>(enzyme::get<0>(r5)));
  // a reference argument, its shadow another object of the same type
  std::vector<double> w{1, 2, 3}, dw(3);
  enzyme::autodiff<enzyme::Reverse>(sum_sq, enzyme::Duplicated<const std::vector<double> &>(w, dw));
  std::printf("%.17g %.17g %.17g\n", dw[0], dw[1], dw[2]);
  // Enzyme's spelling with the result's activity, and class template argument deduction
  auto r6 = enzyme::autodiff<enzyme::Reverse, enzyme::Active<double>>(square, enzyme::Active(4.0));
  std::printf("%.17g\n", enzyme::get<0>(enzyme::get<0>(r6)));
  // a void function: outputs' adjoints flow back through Duplicated pointers; k is Active
  double x[2] = {1, 2}, dx[2] = {0, 0}, y[2], dy[2] = {1, 1};
  auto r7 = enzyme::autodiff<enzyme::Reverse>(scale, enzyme::Duplicated<double *>(y, dy),
                                              enzyme::Duplicated<const double *>(x, dx), enzyme::Active<double>(3.0));
  std::printf("%.17g %.17g %.17g\n", dx[0], dx[1], enzyme::get<0>(enzyme::get<0>(r7)));
  return 0;
}
"""


def expected() -> list[float]:
    x = 0.5
    return [6.0,
            math.cos(x) * 6 * x + math.sin(x) * 6, math.sin(x) * x, math.sin(x) * x, math.sin(x) * x, 6 * x,
            12.0, 4.0,
            6.0, 9.0,
            6.0,
            math.cos(x) * 6 * x + math.sin(x) * 6, 6.0,
            24.0,
            2.0, 4.0, 6.0,
            8.0,
            6.0, 12.0, 5.0]


@pytest.mark.parametrize("flags", [("-O2",), ("-O0", "-std=c++20")])
def test_cxx_interface_against_closed_forms(work, flags):
    write(work, "prog.cc", PROGRAM)
    proc = run([ENZYME_BUILD, "c++", *flags, "prog.cc", "-o", "prog"], work)
    assert proc.returncode == 0, proc.stderr
    proc = run([work / "prog"], work)
    assert proc.returncode == 0, proc.stderr
    values = [float(v) for v in proc.stdout.split()]
    assert values == pytest.approx(expected(), rel=1e-14)


def test_cxx_interface_across_translation_units(work):
    write(work, "model.cc", "double energy(double x, double y) { return x * x * y + y; }\n")
    write(work, "main.cc", r"""
#include <cstdio>
#include <enzyme/enzyme>
double energy(double x, double y);
int main() {
  auto g = enzyme::autodiff<enzyme::Reverse>(energy, enzyme::Active<double>(3.0), enzyme::Active<double>(2.0));
  std::printf("%.17g %.17g\n", enzyme::get<0>(enzyme::get<0>(g)), enzyme::get<1>(enzyme::get<0>(g)));
  return 0;
}
""")
    for name in ("model", "main"):
        proc = run([ENZYME_BUILD, "c++", "-O2", "-c", f"{name}.cc", "-o", f"{name}.o"], work)
        assert proc.returncode == 0, proc.stderr
    proc = run([ENZYME_BUILD, "c++", "model.o", "main.o", "-o", "prog"], work)
    assert proc.returncode == 0, proc.stderr
    assert run([work / "prog"], work).stdout.split() == ["12", "10"]


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_upstream_template_spelling_of_the_entry_points(work, opt):
    """Enzyme's own `__enzyme_autodiff<Ret>(fn, markers...)` at global scope (upstream's
    <enzyme/enzyme> declares it there), next to calls of the C prototype without template
    arguments, and the forward entry point the same way."""
    write(work, "sugar.cc", r"""
#include <cstdio>
#include <enzyme/enzyme>
double mul(double x, double y) { return x * y; }
struct pair { double x, y; };
int main() {
  auto [dx, dy] = __enzyme_autodiff<pair>((void *)mul, enzyme_out, 3.1, enzyme_out, 2.7);
  double c = __enzyme_autodiff((void *)mul, 3.0, enzyme_const, 5.0);
  double t = __enzyme_fwddiff<double>((void *)mul, enzyme_dup, 2.0, 1.0, enzyme_const, 4.0);
  std::printf("%.17g %.17g %.17g %.17g\n", dx, dy, c, t);
  return 0;
}
""")
    proc = run([ENZYME_BUILD, "c++", "-std=c++17", opt, "sugar.cc", "-o", "sugar"], work)
    assert proc.returncode == 0, proc.stderr
    out = run([work / "sugar"], work)
    assert out.returncode == 0, out.stderr
    assert [float(v) for v in out.stdout.split()] == [2.7, 3.1, 5.0, 4.0]


@pytest.mark.parametrize("call, message", [
    ("enzyme::autodiff<enzyme::Reverse>(h, enzyme::Active<double *>(&x))", "enzyme::Active takes a floating-point"),
    ("enzyme::autodiff<enzyme::Reverse>(sq, enzyme::Duplicated<double>(x, x))",
     "in reverse mode enzyme::Duplicated takes a pointer or a reference"),
    ("enzyme::autodiff<enzyme::Forward>(sq, enzyme::Active<double>(x))", "enzyme::Active is for reverse mode"),
])
def test_cxx_interface_misuse_is_a_compile_error(work, call, message):
    write(work, "bad.cc", "#include <enzyme/enzyme>\ndouble sq(double x) { return x * x; }\n"
                          "double h(double *x) { return *x; }\n"
                          f"int main() {{ double x = 1; auto r = {call}; (void)r; return 0; }}\n")
    proc = run([ENZYME_BUILD, "c++", "-c", "bad.cc", "-o", "bad.o"], work)
    assert proc.returncode != 0
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
