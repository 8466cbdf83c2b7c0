"""Gradients through the link step: the AD call and the differentiated code in different
objects, archives (regular and thin) and a shared library used by a plain-cc program."""
from __future__ import annotations

import pytest

ENERGY = """double energy(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += x[i] * x[i] * x[i];
  return s;
}
"""
OTHER = "double unrelated(double x) { return x * 2; }\n"
MAIN = """#include <stdio.h>
#include <enzyme/enzyme.h>
double energy(const double *x, int n);
int main(void) {
  double x[3] = {1, 2, 3}, dx[3] = {0, 0, 0};
  __enzyme_autodiff((void *)energy, enzyme_dup, x, dx, enzyme_const, 3);
  printf("%g %g %g\\n", dx[0], dx[1], dx[2]);
  return 0;
}
"""


@pytest.mark.parametrize("ar_flags", ["rcs", "rcsT"])
def test_gradient_of_a_function_in_an_archive(ws, ar_flags):
    ws.write("energy.c", ENERGY)
    ws.write("other.c", OTHER)
    ws.write("main.c", MAIN)
    ws.eb("-O2", "-c", "energy.c", "other.c", check=True)
    ws.run(["ar", ar_flags, "libenergy.a", "energy.o", "other.o"], check=True)
    ws.eb("-O2", "main.c", "-L.", "-lenergy", "-o", "grad", check=True,
          env={"ENZYME_BUILD_KEEP": "keep"})
    assert ws.exe("grad").stdout == "3 12 27\n"  # d/dx sum x^3 = 3x^2
    assert "unrelated" not in ws.read("keep/grad.pre-ad.ll")
    assert "__enzyme_autodiff" not in ws.read("keep/grad.post-ad.ll")


def test_gradient_inside_a_shared_library_used_by_plain_cc(ws):
    ws.write("lib.c", ENERGY + """#include <enzyme/enzyme.h>
void energy_gradient(const double *x, double *dx, int n) {
  __enzyme_autodiff((void *)energy, enzyme_dup, x, dx, enzyme_const, n);
}
""")
    ws.eb("-O2", "-shared", "-fPIC", "lib.c", "-o", "libenergy.so", check=True)
    ws.write("use.c", """#include <stdio.h>
void energy_gradient(const double *x, double *dx, int n);
int main(void) {
  double x[2] = {0.5, -2}, dx[2] = {1, 1};
  energy_gradient(x, dx, 2);
  printf("%g %g\\n", dx[0], dx[1]);
  return 0;
}
""")
    ws.run(["cc", "use.c", "-L.", "-lenergy", f"-Wl,-rpath,{ws.path}", "-o", "use"], check=True)
    assert ws.exe("use").stdout == "1.75 13\n"  # shadows accumulate: 1 + 3x^2


def test_gradient_with_cxx_driver_and_separate_objects(ws):
    ws.write("energy.cc", 'extern "C" ' + ENERGY)
    ws.write("main.cc", MAIN.replace("double energy(", 'extern "C" double energy('))
    ws.eb("-O1", "-c", "energy.cc", cxx=True, check=True)
    ws.eb("-O1", "main.cc", "energy.o", "-o", "grad", cxx=True, check=True)
    assert ws.exe("grad").stdout == "3 12 27\n"


def test_fat_archive_found_through_library_path(ws):
    """Only the archive calls __enzyme_autodiff, and -l finds it via LIBRARY_PATH, not -L."""
    ws.write("lib/grad.c", ENERGY + """#include <enzyme/enzyme.h>
void energy_gradient(const double *x, double *dx, int n) {
  __enzyme_autodiff((void *)energy, enzyme_dup, x, dx, enzyme_const, n);
}
""")
    ws.write("main.c", """#include <stdio.h>
void energy_gradient(const double *x, double *dx, int n);
int main(void) { double x[1] = {2}, dx[1] = {0}; energy_gradient(x, dx, 1);
                 printf("%g\\n", dx[0]); return 0; }
""")
    ws.eb("-O2", "-c", "lib/grad.c", "-o", "lib/grad.o", check=True)
    ws.run(["ar", "rcs", "lib/libgrad.a", "lib/grad.o"], check=True)
    ws.eb("main.c", "-lgrad", "-o", "prog", env={"LIBRARY_PATH": ws.file("lib")}, check=True)
    assert ws.exe("prog").stdout == "12\n"


def test_user_chosen_lld_selects_members_too(ws):
    ws.write("energy.c", ENERGY)
    ws.write("other.c", OTHER)
    ws.write("main.c", MAIN)
    ws.eb("-O2", "-c", "energy.c", "other.c", check=True)
    ws.run(["ar", "rcs", "libenergy.a", "energy.o", "other.o"], check=True)
    ws.eb("-fuse-ld=lld", "main.c", "libenergy.a", "-o", "grad", check=True,
          env={"ENZYME_BUILD_KEEP": "keep"})
    assert ws.exe("grad").stdout == "3 12 27\n"
    assert "unrelated" not in ws.read("keep/grad.pre-ad.ll")
