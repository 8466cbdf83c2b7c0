"""libc memcpy/memmove/memset calls and their _FORTIFY_SOURCE forms are lowered to the
llvm.mem* intrinsics before AD; the checked forms keep their check (an overflow still stops
the program the way glibc does), and the IR stays valid."""
from __future__ import annotations

import os
import subprocess
import sys

from enzyme_build.ad.stage import lower_library_calls

ENZYME_BUILD = os.path.join(os.path.dirname(sys.executable), "enzyme-build")

IR = """\
define ptr @f(ptr %d, ptr %s, i64 %n, i64 %room) {
entry:
  %a = call ptr @memcpy(ptr noundef %d, ptr noundef nonnull align 8 %s, i64 noundef %n)
  %b = tail call ptr @__memmove_chk(ptr %a, ptr %s, i64 %n, i64 %room)
  call ptr @memset(ptr %b, i32 0, i64 8)
  ret ptr %b
}
declare ptr @memcpy(ptr, ptr, i64)
declare ptr @__memmove_chk(ptr, ptr, i64, i64)
declare ptr @memset(ptr, i32, i64)
"""


def test_lowering_is_valid_ir_with_the_check_kept():
    from enzyme_build import llvm
    out = lower_library_calls(IR)
    assert "call void @llvm.memcpy.p0.p0.i64(ptr %d, ptr %s, i64 %n, i1 false)" in out
    assert "call void @__enzyme_build_check_size(i64 %n, i64 %room)" in out
    assert "call void @llvm.memmove.p0.p0.i64(ptr %a, ptr %s, i64 %n, i1 false)" in out
    assert "%a = getelementptr i8, ptr %d, i64 0" in out  # memcpy returns its destination
    assert "@llvm.memset.p0.i64(ptr %b, i8 %libc.mem." in out
    module = llvm.parse_assembly(out, "lowered")
    llvm.verify(module)


OVERFLOW = """\
#include <stdio.h>
#include <string.h>
double __enzyme_autodiff(void *, ...);
static volatile int n = 8;
double f(double x) { double buf[4]; double src[8] = {x, x, x, x, x, x, x, x};
                     memcpy(buf, src, n * sizeof(double)); return buf[0] * buf[1]; }
int main(void) { printf("%g\\n", __enzyme_autodiff((void *)f, 3.0)); return 0; }
"""


def test_fortify_check_still_stops_an_overflow(tmp_path):
    (tmp_path / "o.c").write_text(OVERFLOW)
    done = subprocess.run([ENZYME_BUILD, "cc", "-O2", "-D_FORTIFY_SOURCE=2", "o.c", "-o", "o"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    run = subprocess.run([str(tmp_path / "o")], capture_output=True, text=True)
    assert run.returncode != 0 and "buffer overflow detected" in run.stderr, (run.returncode, run.stderr)
