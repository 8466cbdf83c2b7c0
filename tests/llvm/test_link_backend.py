"""The link's back end end to end: `enzyme-build cc` gives the same program through the
release tools (opt/llc, split by ENZYME_BUILD_JOBS) as through llvmlite in-process."""
from __future__ import annotations

import os
import subprocess

import pytest

from enzyme_build.llvm import backend

SOURCE = r"""
#include <stdio.h>
#include <enzyme/enzyme.h>
static double helper(double x) { return x * x * x; }
__attribute__((noinline)) double energy(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += helper(x[i]);
  return s;
}
int main(void) {
  double x[3] = {1, 2, 3}, dx[3] = {0, 0, 0};
  __enzyme_autodiff((void *)energy, enzyme_dup, x, dx, enzyme_const, 3);
  printf("%g %g %g\n", dx[0], dx[1], dx[2]);
  return 0;
}
"""


@pytest.mark.skipif(not backend.external_tools_enabled(), reason="opt/llc of LLVM 22 not installed")
@pytest.mark.parametrize("level", ["-O2", "-Os"])
def test_release_tools_and_llvmlite_build_the_same_program(tmp_path, enzyme_build_exe, level):
    (tmp_path / "grad.c").write_text(SOURCE)
    outputs = {}
    for tag, extra in (("in-process", {"ENZYME_BUILD_IN_PROCESS": "1"}),
                       ("tools", {"ENZYME_BUILD_JOBS": "2"})):
        env = dict(os.environ, **extra)
        exe = tmp_path / f"grad-{tag}"
        subprocess.run([enzyme_build_exe, "cc", level, "grad.c", "-o", str(exe)], cwd=tmp_path,
                       env=env, check=True)
        outputs[tag] = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    assert outputs["tools"] == outputs["in-process"] == "3 12 27\n"
    assert sorted(os.listdir(tmp_path)) == ["grad-in-process", "grad-tools", "grad.c"]


def test_bad_jobs_setting_fails_the_link_with_one_message(tmp_path, enzyme_build_exe):
    (tmp_path / "grad.c").write_text(SOURCE)
    proc = subprocess.run([enzyme_build_exe, "cc", "-O2", "grad.c", "-o", "grad"], cwd=tmp_path,
                          env=dict(os.environ, ENZYME_BUILD_JOBS="lots"), capture_output=True, text=True)
    assert proc.returncode == 1
    assert "ENZYME_BUILD_JOBS='lots' is not a positive number of jobs" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "grad").exists()
