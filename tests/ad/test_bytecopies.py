"""IR-level tests of the byte-copy rewrite (enzyme_build/ad/bytecopies.py): which loops
become calls of `@__enzyme_build_copy_bytes` / `_down`, and that the rewritten loops do
exactly what the loops did for every relative position of source and destination.
"""
from __future__ import annotations

import subprocess

from ad_helpers import CLANG, LAYOUT, verified
from enzyme_build.ad.bytecopies import COPY_BYTES, COPY_BYTES_DOWN, IDIOM, copy_loops_to_calls


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
    assert f"call void {COPY_BYTES}(ptr %i$dst, ptr %i$src, i64 %i$span)" in body
    assert "%i$dst = getelementptr i8, ptr %d, i64 %i$first" in body   # d + 0 (folded later)
    assert "load i8" not in body and "phi" not in body
    assert out.count(f"define internal void {COPY_BYTES}(") == 1


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
        # a step of two
        "step 2": [line.replace("add nuw i64 %i, 1", "add nuw i64 %i, 2") for line in FORWARD],
    }
    for what, loop in cases.items():
        assert copy_loops_to_calls(verified(_module(loop)), {"@g"}) is None, what
    # the counter is read after the loop
    used = _module(FORWARD, after=["  %last = phi i64 [ 0, %entry ], [ %next, %loop ]",
                                   "  store i64 %last, ptr %d, align 8"])
    assert copy_loops_to_calls(verified(used), {"@g"}) is None
    # a function not named is left alone
    assert copy_loops_to_calls(verified(_module(FORWARD)), {"@other"}) is None


LOOPS = r"""
#include <stddef.h>
void up(char *d, const char *s, long n) { for (long i = 0; i < n; i++) d[i] = s[i]; }
void up_from(char *d, const char *s, long lo, long hi) { for (long i = lo; i < hi; i++) d[i] = s[i]; }
void down(char *d, const char *s, long n) { for (long i = n; i-- > 0;) d[i] = s[i]; }
void down_int(char *d, const char *s, int n) { for (int i = n - 1; i >= 0; i--) d[i] = s[i]; }
void down_to(char *d, const char *s, long lo, long hi) { for (long i = hi; i-- > lo;) d[i] = s[i]; }
void down_long(char *d, const char *s, long n) { for (long i = n - 1; i >= 0; i--) d[i] = s[i]; }
void up_le(char *d, const char *s, long lo, long last) { for (long i = lo; i <= last; i++) d[i] = s[i]; }
void move(void *dst, const void *src, size_t n) {     /* a hand-written memmove */
  char *d = dst; const char *s = src;
  if (d < s) { for (size_t i = 0; i < n; i++) d[i] = s[i]; }
  else { for (size_t i = n; i-- > 0;) d[i] = s[i]; }
}
"""

LOOPS_DRIVER = r"""
#include <stdio.h>
#include <string.h>
#include <stddef.h>
void up(char *, const char *, long);
void up_from(char *, const char *, long, long);
void down(char *, const char *, long);
void down_int(char *, const char *, int);
void down_to(char *, const char *, long, long);
void down_long(char *, const char *, long);
void up_le(char *, const char *, long, long);
void move(void *, const void *, size_t);
static void ref_up(volatile char *d, const char *s, long lo, long hi) { for (long i = lo; i < hi; i++) d[i] = s[i]; }
static void ref_down(volatile char *d, const char *s, long lo, long hi) { for (long i = hi; i-- > lo;) d[i] = s[i]; }
static int bad, cases;
static void check(const char *what, const char *a, const char *b, long n, long so, long doff) {
  cases++;
  if (memcmp(a, b, 96) && bad++ < 5) printf("%s differs: n=%ld s=%ld d=%ld\n", what, n, so, doff);
}
#define FILL for (int i = 0; i < 96; i++) a[i] = b[i] = (char)(i * 7 + 1)
int main(void) {
  char a[96], b[96];
  for (long n = 0; n <= 20; n++)
    for (long so = 0; so + n <= 96 && so <= 40; so += 3)
      for (long doff = 0; doff + n <= 96 && doff <= 40; doff++) {
        long lo = n / 3;
        FILL; ref_up(a + doff, a + so, 0, n); up(b + doff, b + so, n); check("up", a, b, n, so, doff);
        FILL; ref_up(a + doff, a + so, lo, n); up_from(b + doff, b + so, lo, n); check("up_from", a, b, n, so, doff);
        FILL; ref_down(a + doff, a + so, 0, n); down(b + doff, b + so, n); check("down", a, b, n, so, doff);
        FILL; ref_down(a + doff, a + so, 0, n); down_int(b + doff, b + so, (int)n); check("down_int", a, b, n, so, doff);
        FILL; ref_down(a + doff, a + so, lo, n); down_to(b + doff, b + so, lo, n); check("down_to", a, b, n, so, doff);
        FILL; ref_down(a + doff, a + so, 0, n); down_long(b + doff, b + so, n); check("down_long", a, b, n, so, doff);
        FILL; ref_up(a + doff, a + so, lo, n); up_le(b + doff, b + so, lo, n - 1); check("up_le", a, b, n, so, doff);
        FILL; memmove(a + doff, a + so, n); move(b + doff, b + so, n); check("move", a, b, n, so, doff);
      }
  printf("%d of %d cases differ\n", bad, cases);
  return bad != 0;
}
"""


def _run_driver(tmp_path, ir_text: str, driver: str) -> str:
    ir = tmp_path / "copies.ll"
    ir.write_text(ir_text)
    (tmp_path / "main.c").write_text(driver)
    exe = tmp_path / "check"
    subprocess.run([CLANG, "-O1", str(tmp_path / "main.c"), str(ir), "-o", str(exe)], check=True,
                   capture_output=True, text=True)
    r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout
    return r.stdout


def test_rewritten_loops_do_what_the_loops_do(tmp_path):
    """C loops counting up (from 0 or from `lo`, to `< hi` or `<= last`) and down (`i-- > 0`,
    `i >= 0` on an int and a long, down to `lo`) and a hand-written memmove, through clang -O2 and the pipeline the AD stage runs
    (loop-idiom leaves them: the pointers may overlap), rewritten, then compared byte for byte
    with reference loops for every position of the destination around the source."""
    from enzyme_build import llvm
    src, ll, idiom = tmp_path / "loops.c", tmp_path / "loops.ll", tmp_path / "idiom.ll"
    src.write_text(LOOPS)
    subprocess.run([CLANG, "-O2", "-fno-vectorize", "-fno-unroll-loops", "-S", "-emit-llvm", str(src), "-o", str(ll)],
                   check=True, capture_output=True, text=True)
    subprocess.run(["opt-22", f"-passes={IDIOM}", "-S", str(ll), "-o", str(idiom)], check=True,
                   capture_output=True, text=True)
    module = llvm.parse_assembly(idiom.read_text(), "loops")
    llvm.run_named_passes(module, ["instnamer"])
    names = {"@up", "@up_from", "@down", "@down_int", "@down_to", "@down_long", "@up_le", "@move"}
    out = verified(copy_loops_to_calls(module.text(), names))
    for name in names:
        body = out.split(f"{name}(", 1)[1].split("\n}", 1)[0]
        assert "load i8" not in body, (name, body)
    assert out.count(f"call void {COPY_BYTES}(") == 4 and out.count(f"call void {COPY_BYTES_DOWN}(") == 5
    report = _run_driver(tmp_path, out, LOOPS_DRIVER)
    assert report.startswith("0 of ") and int(report.split()[2]) > 20000, report
