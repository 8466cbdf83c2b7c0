"""Wide integer loads cut into whole floats (`split_float_carriers`): GVN forwards a 16-byte
(SSE) load to later scalar loads of the same bytes as `lshr`/`trunc`/`bitcast` of one i128.
The pre-AD rewrite turns each float back into a load of its own bytes; anything else (a cut
across a float boundary, another use of the integer, a big-endian target) stays as it was,
for the memory type analysis to refuse with a message."""
from __future__ import annotations

import os

import pytest

from enzyme_build.ad.stage import split_float_carriers

from ad_helpers import HERE, LAYOUT, verified
from ad_helpers import ir_module as module


TWO_DOUBLES = module(
    "  %w = load i128, ptr %p, align 8",
    "  %lo = trunc i128 %w to i64",
    "  %a = bitcast i64 %lo to double",
    "  %sh = lshr i128 %w, 64",
    "  %hi = trunc nuw i128 %sh to i64",
    "  %b = bitcast i64 %hi to double",
    "  %s = fmul double %a, %b",
    "  ret double %s")


def test_i128_cut_into_two_doubles():
    out = verified(split_float_carriers(verified(TWO_DOUBLES)))
    assert "i128" not in out.split("\n", 1)[1]
    assert "  %a = load double, ptr %p, align 8" in out
    assert "  %b.bytes = getelementptr inbounds i8, ptr %p, i64 8" in out
    assert "  %b = load double, ptr %b.bytes, align 8" in out


def test_only_the_high_half_used():
    text = module(
        "  %w = load i128, ptr %p, align 16",
        "  %sh = lshr i128 %w, 64",
        "  %hi = trunc i128 %sh to i64",
        "  %b = bitcast i64 %hi to double",
        "  ret double %b")
    out = verified(split_float_carriers(verified(text)))
    assert "load i128" not in out and "  %b = load double, ptr %b.bytes, align 8" in out


def test_i128_cut_into_four_floats_through_chained_shifts():
    text = module(
        "  %w = load i128, ptr %p, align 4",
        "  %t0 = trunc i128 %w to i32",
        "  %f0 = bitcast i32 %t0 to float",
        "  %s1 = lshr i128 %w, 32",
        "  %t1 = trunc i128 %s1 to i32",
        "  %f1 = bitcast i32 %t1 to float",
        "  %s2 = lshr i128 %s1, 32",        # shifts compose: byte 8
        "  %t2 = trunc i128 %s2 to i32",
        "  %f2 = bitcast i32 %t2 to float",
        "  %s3 = lshr exact i128 %w, 96",
        "  %t3 = trunc i128 %s3 to i32",
        "  %f3 = bitcast i32 %t3 to float",
        "  %x = fadd float %f0, %f1",
        "  %y = fadd float %f2, %f3",
        "  %z = fmul float %x, %y",
        "  ret float %z", ret="float")
    out = verified(split_float_carriers(verified(text)))
    assert "i128" not in out.split("\n", 1)[1]
    for name, offset in (("f1", 4), ("f2", 8), ("f3", 12)):
        assert f"  %{name}.bytes = getelementptr inbounds i8, ptr %p, i64 {offset}" in out
        assert f"  %{name} = load float, ptr %{name}.bytes, align 4" in out


def test_i64_holding_two_floats_with_debug_records():
    text = "\n".join([
        LAYOUT, "",
        "define float @g(ptr %p) !dbg !4 {",
        "bb:",
        "  %w = load i64, ptr %p, align 8, !dbg !8",
        "    #dbg_value(i64 %w, !7, !DIExpression(), !8)",
        "  %t0 = trunc i64 %w to i32, !dbg !8",
        "  %f0 = bitcast i32 %t0 to float, !dbg !8",
        "  %s1 = lshr i64 %w, 32, !dbg !8",
        "  %t1 = trunc nuw i64 %s1 to i32, !dbg !8",
        "  %f1 = bitcast i32 %t1 to float, !dbg !8",
        "    #dbg_value(float %f1, !7, !DIExpression(), !8)",
        "  %z = fmul float %f0, %f1, !dbg !8",
        "  ret float %z, !dbg !8",
        "}",
        "",
        "!llvm.dbg.cu = !{!0}",
        "!llvm.module.flags = !{!3}",
        '!0 = distinct !DICompileUnit(language: DW_LANG_C11, file: !1, producer: "t", isOptimized: true, runtimeVersion: 0, emissionKind: FullDebug)',
        '!1 = !DIFile(filename: "t.c", directory: "/")',
        "!3 = !{i32 2, !\"Debug Info Version\", i32 3}",
        '!4 = distinct !DISubprogram(name: "g", scope: !1, file: !1, line: 1, type: !5, scopeLine: 1, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)',
        "!5 = !DISubroutineType(types: !6)",
        "!6 = !{null}",
        '!7 = !DILocalVariable(name: "v", scope: !4, file: !1, line: 1, type: !9)',
        "!8 = !DILocation(line: 2, scope: !4)",
        '!9 = !DIBasicType(name: "float", size: 32, encoding: DW_ATE_float)',
        ""])
    out = verified(split_float_carriers(verified(text)))
    assert "load i64" not in out and "#dbg_value(i64 %w" not in out
    assert "  %f0 = load float, ptr %p, align 8, !dbg !8" in out
    assert "  %f1 = load float, ptr %f1.bytes, align 4, !dbg !8" in out
    assert "#dbg_value(float %f1" in out


@pytest.mark.parametrize("change", [
    # a double cut across the boundary of two: not whole floats
    lambda t: t.replace("lshr i128 %w, 64", "lshr i128 %w, 32"),
    # the integer has another use (a copy elsewhere)
    lambda t: t.replace("  %s = fmul", "  store i128 %w, ptr null, align 8\n  %s = fmul"),
    # a cut piece used as an integer
    lambda t: t.replace("  %s = fmul double %a, %b", "  %n = add i64 %hi, 1\n  %s = fmul double %a, %b"),
    # big-endian: the low bits are the last bytes
    lambda t: t.replace('datalayout = "e-', 'datalayout = "E-'),
    # volatile loads are not split
    lambda t: t.replace("load i128", "load volatile i128"),
], ids=["straddles", "other-use", "integer-use", "big-endian", "volatile"])
def test_left_alone(change):
    text = verified(change(TWO_DOUBLES))
    assert split_float_carriers(text) == text


def test_programs_of_the_class(build, run_ok):
    """SSE loads/stores, 16-byte vector types and struct copies over arrays that small
    unrolled loops also access element by element (fuzz seed 7926 is the first function)."""
    source = os.path.join(HERE, "programs", "wide_carriers.c")
    for opt, before in (("-O0", False), ("-O2", False), ("-O2", True)):
        assert run_ok(build(source, opt=opt, ad_before_opt=before)) == 38


# Known doubles copied over active ones: the optimizer folds the copy into a store of an
# integer constant holding the doubles' bits (`store i64 4576879442586057730`), and the
# reverse sweep must end the overwritten values' adjoint there as for a double store (it
# was a silent wrong gradient: fuzz seed 8259). Members: a conditional memcpy from a
# malloc'd buffer of constants, from a constant global, a float (i32) copy, and a uint64_t
# constant copied into a double slot.
CONSTANT_BITS = {
    "heap_constants": r"""
__attribute__((noinline)) static double weigh(const double *a, int n) {
  double s = 0; for (int i = 0; i < n; i++) s += (0.5 + i) * a[i] * a[i]; return s;
}
__attribute__((noinline)) double f(const double *x) {
  double a[6];
  double *b = malloc(6 * sizeof(double));
  for (int i = 0; i < 6; i++) { a[i] = x[i % 4] * x[(i + 1) % 4]; b[i] = tanh(exp(0.5) - 1.25); }
  if (x[0] * x[0] + 1.0 > 0.1) memcpy(a + 4, b + 1, sizeof(double));
  double out = weigh(a, 6) + b[2];
  free(b);
  return out;
}""",
    "constant_global": r"""
static const double table[3] = {0.25, -1.5, 2.0};
__attribute__((noinline)) static double weigh(const double *a, int n) {
  double s = 0; for (int i = 0; i < n; i++) s += (1.0 + i) * a[i]; return s;
}
__attribute__((noinline)) double f(const double *x) {
  double a[4] = {sin(x[0]), x[1] * x[2], exp(x[3]), x[0] + x[3]};
  if (x[1] < 0) memcpy(a + 1, table + 1, 2 * sizeof(double));
  return weigh(a, 4) * a[0];
}""",
    "float_copy": r"""
__attribute__((noinline)) static float weigh(const float *a, int n) {
  float s = 0; for (int i = 0; i < n; i++) s += (1.0f + i) * a[i]; return s;
}
__attribute__((noinline)) double f(const double *x) {
  float a[4], k = 0.75f;
  for (int i = 0; i < 4; i++) a[i] = (float)(x[i] * x[i]);
  if (x[2] > 0) memcpy(a + 3, &k, sizeof(float));
  return weigh(a, 4);
}""",
    "word_constant": r"""
__attribute__((noinline)) static double weigh(const double *a, int n) {
  double s = 0; for (int i = 0; i < n; i++) s += (2.0 + i) * a[i] * a[0]; return s;
}
__attribute__((noinline)) double f(const double *x) {
  double a[3] = {x[0] * x[1], x[2] * x[3], x[1] + x[3]};
  uint64_t one = 0x3ff0000000000000ull;   /* the bits of 1.0 */
  if (x[3] > 0) memcpy(&a[1], &one, sizeof one);
  return weigh(a, 3);
}""",
}


@pytest.mark.parametrize("config", ["O0", "O2", "adbefore"])
@pytest.mark.parametrize("name", sorted(CONSTANT_BITS))
def test_constant_bits_stored_over_active_floats(tmp_path, name, config):
    from ad_helpers import FD_HEAD, LEVELS, check_fd_rows, fd_main, fd_rows
    flags, env = LEVELS[config]
    agree, fd_tol = (1e-6, 2e-3) if name == "float_copy" else (1e-10, 1e-5)
    rows = fd_rows(tmp_path, FD_HEAD + CONSTANT_BITS[name] + fd_main(h=3e-3 if name == "float_copy" else 1e-6),
                   flags, env)
    check_fd_rows(rows, 4, agree=agree, fd_tol=fd_tol)
