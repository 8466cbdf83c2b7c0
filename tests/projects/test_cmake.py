"""CMake projects (static library + executables) with CMAKE_C_COMPILER=enzyme-cc and enzyme-c++."""
from __future__ import annotations

import math
import os
import shutil
import textwrap

import pytest

from project_helpers import BIN_DIR, is_fat_object, run

CMAKELISTS = textwrap.dedent("""\
    cmake_minimum_required(VERSION 3.16)
    project(energy_demo C)
    add_library(energy STATIC energy.c)
    target_include_directories(energy PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
    add_executable(app app.c)
    target_link_libraries(app PRIVATE energy m)
    add_executable(grad grad.c)
    target_link_libraries(grad PRIVATE energy m)
    """)
ENERGY_H = textwrap.dedent("""\
    double energy(const double *x, int n);
    """)
ENERGY_C = textwrap.dedent("""\
    #include <math.h>
    #include "energy.h"
    /* sum_i (i+1) x_i^2 + sin(x_i) */
    double energy(const double *x, int n) {
      double s = 0.0;
      for (int i = 0; i < n; i++) s += (i + 1) * x[i] * x[i] + sin(x[i]);
      return s;
    }
    """)
APP_C = textwrap.dedent("""\
    #include <stdio.h>
    #include "energy.h"
    int main(void) {
      double x[4] = {0.5, -1.0, 2.0, 0.25};
      printf("%.9f\\n", energy(x, 4));
      return 0;
    }
    """)
# the gradient of a function that lives in the static library: the link step must pull
# energy's bitcode out of libenergy.a to differentiate it
GRAD_C = textwrap.dedent("""\
    #include <stdio.h>
    #include "energy.h"
    extern int enzyme_dup, enzyme_const;
    void __enzyme_autodiff(void *, ...);
    int main(void) {
      double x[4] = {0.5, -1.0, 2.0, 0.25}, dx[4] = {0, 0, 0, 0};
      __enzyme_autodiff((void *)energy, enzyme_dup, x, dx, enzyme_const, 4);
      for (int i = 0; i < 4; i++) printf("%.9f\\n", dx[i]);
      return 0;
    }
    """)
X = [0.5, -1.0, 2.0, 0.25]


@pytest.fixture(scope="module")
def cmake_build(tmp_path_factory):
    """Configure the project with enzyme-cc as the C compiler; return (source, build) dirs."""
    if not shutil.which("cmake"):
        pytest.skip("cmake not installed (./bootstrap installs it)")
    src = tmp_path_factory.mktemp("cmake_src")
    for name, text in (("CMakeLists.txt", CMAKELISTS), ("energy.h", ENERGY_H),
                       ("energy.c", ENERGY_C), ("app.c", APP_C), ("grad.c", GRAD_C)):
        (src / name).write_text(text)
    build = tmp_path_factory.mktemp("cmake_build")
    run(["cmake", "-S", str(src), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
         f"-DCMAKE_C_COMPILER={os.path.join(BIN_DIR, 'enzyme-cc')}"], timeout=300)
    return src, build


def test_cmake_detects_clang(cmake_build):
    _src, build = cmake_build
    cache = (build / "CMakeCache.txt").read_text()
    assert "CMAKE_C_COMPILER:" in cache and "enzyme-cc" in cache
    compiler_info = next(build.glob("CMakeFiles/*/CMakeCCompiler.cmake")).read_text()
    assert 'set(CMAKE_C_COMPILER_ID "Clang")' in compiler_info


def test_cmake_library_and_program(cmake_build):
    _src, build = cmake_build
    run(["cmake", "--build", str(build), "--target", "app", "-j2"], timeout=300)
    library = build / "libenergy.a"
    assert library.is_file()
    objects = list(build.glob("CMakeFiles/energy.dir/energy.c.o"))
    assert objects and is_fat_object(str(objects[0]))
    want = sum((i + 1) * x * x + math.sin(x) for i, x in enumerate(X))
    assert float(run([str(build / "app")]).stdout) == pytest.approx(want, abs=1e-9)


def test_cmake_gradient_through_static_library(cmake_build):
    _src, build = cmake_build
    run(["cmake", "--build", str(build), "--target", "grad", "-j2"], timeout=300)
    got = [float(v) for v in run([str(build / "grad")]).stdout.split()]
    want = [2 * (i + 1) * x + math.cos(x) for i, x in enumerate(X)]
    assert got == pytest.approx(want, abs=1e-9)


CXX_CMAKELISTS = textwrap.dedent("""\
    cmake_minimum_required(VERSION 3.16)
    project(model_demo CXX)
    add_library(model STATIC model.cpp)
    add_executable(grad grad.cpp)
    target_link_libraries(grad PRIVATE model)
    """)
MODEL_CPP = textwrap.dedent("""\
    #include <cmath>
    #include <vector>
    double energy(const double *x, int n) {
      std::vector<double> weight(n);
      for (int i = 0; i < n; i++) weight[i] = i + 1;
      double s = 0;
      for (int i = 0; i < n; i++) s += weight[i] * x[i] * x[i] + std::sin(x[i]);
      return s;
    }
    """)
GRAD_CPP = textwrap.dedent("""\
    #include <cstdio>
    #include <enzyme/enzyme.h>
    double energy(const double *x, int n);
    int main() {
      double x[4] = {0.5, -1.0, 2.0, 0.25}, dx[4] = {0, 0, 0, 0};
      __enzyme_autodiff((void *)energy, enzyme_dup, x, dx, enzyme_const, 4);
      for (double d : dx) std::printf("%.9f\\n", d);
      return 0;
    }
    """)


def test_cmake_cxx_gradient_through_static_library(tmp_path):
    """The same through enzyme-c++, with std::vector inside the differentiated function."""
    if not shutil.which("cmake"):
        pytest.skip("cmake not installed (./bootstrap installs it)")
    src, build = tmp_path / "src", tmp_path / "build"
    src.mkdir()
    for name, text in (("CMakeLists.txt", CXX_CMAKELISTS), ("model.cpp", MODEL_CPP),
                       ("grad.cpp", GRAD_CPP)):
        (src / name).write_text(text)
    run(["cmake", "-S", str(src), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
         f"-DCMAKE_CXX_COMPILER={os.path.join(BIN_DIR, 'enzyme-c++')}"], timeout=300)
    run(["cmake", "--build", str(build), "-j2"], timeout=300)
    got = [float(v) for v in run([str(build / "grad")]).stdout.split()]
    want = [2 * (i + 1) * x + math.cos(x) for i, x in enumerate(X)]
    assert got == pytest.approx(want, abs=1e-9)
