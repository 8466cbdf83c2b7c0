"""IR-level tests of the byte-copy rewrite (enzyme_build/ad/bytecopies.py): which loops
become calls of `@__enzyme_build_copy_bytes`, and that the helper does exactly what the
loop does for every relative position of source and destination.
"""
from __future__ import annotations

import os
import subprocess

from ad_helpers import CLANG, LAYOUT, verified
from enzyme_build.ad.bytecopies import _COPY_BYTES_IR, COPY_BYTES, copy_loops_to_calls


def _module(loop: list[str], params: str = "ptr %d, ptr %s, i64 %n", after: list[str] = ()) -> str:
    """@g(params): an entry block branching to the loop block `loop` (its lines), which
    leaves to `done`."""
    return "\n".join([LAYOUT, "", f"define void @g({params}) {{", "entry:",
                      "  %nonzero = icmp ne i64 %n, 0",
                      "  br i1 %nonzero, label %loop, label %done", "loop:", *loop,
                      "done:", *after, "  ret void", "}", ""])


FORWARD = ["  %i = phi i64 [ 0, %entry ], [ %next, %loop ]",
           "  %sp = getelementptr inbounds i8, ptr %s, i64 %i",
           "  %v = load i8, ptr %sp, align 1",
           "  %dp = getelementptr inbounds i8, ptr %d, i64 %i",
           "  store i8 %v, ptr %dp, align 1",
           "  %next = add nuw i64 %i, 1",
           "  %stop = icmp eq i64 %next, %n",
           "  br i1 %stop, label %done, label %loop"]


def test_a_forward_byte_loop_becomes_a_call():
    out = copy_loops_to_calls(verified(_module(FORWARD)), {"@g"})
    verified(out)
    body = out.split("define void @g(", 1)[1].split("\n}", 1)[0]
    assert f"call void {COPY_BYTES}(ptr %d, ptr %s, i64 %n)" in body
    assert "load i8" not in body and "phi" not in body
    assert out.count(f"define internal void {COPY_BYTES}(") == 1


def test_a_loop_from_a_nonzero_start_copies_end_minus_start_bytes():
    loop = [line.replace("[ 0, %entry ]", "[ %lo, %entry ]") for line in FORWARD]
    out = copy_loops_to_calls(verified(_module(loop, "ptr %d, ptr %s, i64 %n, i64 %lo")), {"@g"})
    verified(out)
    assert "%i = sub i64 %n, %lo" in out
    assert f"call void {COPY_BYTES}(ptr %d, ptr %s, i64 %i)" in out


def test_the_helper_is_added_once_for_two_loops():
    text = verified(_module(FORWARD))
    second = text.replace("@g(", "@h(")
    both = text + second.split(LAYOUT, 1)[1]
    out = copy_loops_to_calls(verified(both), {"@g", "@h"})
    verified(out)
    assert out.count(f"call void {COPY_BYTES}(") == 2
    assert out.count(f"define internal void {COPY_BYTES}(") == 1
    assert out.count("declare void @llvm.memmove.p0.p0.i64(") == 1


def test_loops_that_are_not_plain_forward_copies_stay():
    cases = {
        # the bound is loaded again every iteration: the copy may change it
        "reloaded bound": [line.replace("%stop = icmp eq i64 %next, %n", "%m = load i64, ptr %s, align 8\n"
                                        "  %stop = icmp eq i64 %next, %m") for line in FORWARD],
        # the stored byte is changed on the way
        "changed byte": [line.replace("store i8 %v,", "%w = xor i8 %v, 1\n  store i8 %w,") for line in FORWARD],
        # wider pieces: a i32 copy of doubles is not a byte copy
        "wider": [line.replace("i8", "i32") for line in FORWARD],
        # a volatile store
        "volatile": [line.replace("store i8", "store volatile i8") for line in FORWARD],
        # a backward loop (counter going down)
        "backward": [line.replace("add nuw i64 %i, 1", "add i64 %i, -1") for line in FORWARD],
    }
    for what, loop in cases.items():
        assert copy_loops_to_calls(verified(_module(loop)), {"@g"}) is None, what
    # the counter is read after the loop
    used = _module(FORWARD, after=["  %last = phi i64 [ 0, %entry ], [ %next, %loop ]",
                                   "  store i64 %last, ptr %d, align 8"])
    assert copy_loops_to_calls(verified(used), {"@g"}) is None
    # a function not named is left alone
    assert copy_loops_to_calls(verified(_module(FORWARD)), {"@other"}) is None


DRIVER = r"""
#include <stdio.h>
#include <string.h>
void __enzyme_build_copy_bytes(char *d, const char *s, long n);
static void loop(char *d, const char *s, long n) {
  for (long i = 0; i < n; i++) ((volatile char *)d)[i] = s[i];
}
int main(void) {
  char a[96], b[96];
  int bad = 0, cases = 0;
  for (long n = 0; n <= 24; n++)
    for (long so = 0; so + n <= 96 && so <= 48; so += 3)
      for (long doff = 0; doff + n <= 96 && doff <= 48; doff++) {
        for (int i = 0; i < 96; i++) a[i] = b[i] = (char)(i * 7 + 1);
        loop(a + doff, a + so, n);
        __enzyme_build_copy_bytes(b + doff, b + so, n);
        cases++;
        if (memcmp(a, b, 96)) { bad++; if (bad < 5) printf("differs: n=%ld s=%ld d=%ld\n", n, so, doff); }
      }
  printf("%d of %d cases differ\n", bad, cases);
  return bad != 0;
}
"""


def test_the_helper_does_what_the_loop_does_for_every_overlap(tmp_path):
    """Byte for byte against the loop, with the destination before, on, inside and after
    the source range (inside: the loop re-reads what it wrote)."""
    ir = tmp_path / "copy.ll"
    exported = _COPY_BYTES_IR.replace("define internal void", "define void")
    ir.write_text("\n".join([LAYOUT, exported,
                             "declare void @llvm.memmove.p0.p0.i64(ptr, ptr, i64, i1 immarg)",
                             "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1 immarg)",
                             "declare i64 @llvm.umin.i64(i64, i64)", ""]))
    verified(ir.read_text())
    (tmp_path / "main.c").write_text(DRIVER)
    exe = tmp_path / "check"
    subprocess.run([CLANG, "-O1", str(tmp_path / "main.c"), str(ir), "-o", str(exe)], check=True,
                   capture_output=True, text=True)
    r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout
    assert r.stdout.startswith("0 of ") and int(r.stdout.split()[2]) > 5000, r.stdout
    assert os.path.exists(exe)
