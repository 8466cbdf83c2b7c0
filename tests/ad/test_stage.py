"""The AD stage's own transformations, IR text in and IR text out, and naming/memoization."""
from __future__ import annotations

import os
import re

from ad_helpers import frontend_ir
from enzyme_build import llvm
from enzyme_build.ad.driver import differentiate_module
from enzyme_build.ad.passes import _define_marker_global
from enzyme_build.ad.stage import canonicalize_markers, run_ad_stage

RAW = """\
@enzyme_dup = global i32 0, align 4
@enzyme_const = external global i32, align 4
declare double @__enzyme_autodiff(ptr, ...)
define void @main() optnone noinline {
entry:
  %0 = load i32, ptr @enzyme_dup, align 4
  %1 = load i32, ptr @enzyme_const, align 4
  %c = call double (ptr, ...) @__enzyme_autodiff(ptr @f, i32 noundef %0, ptr null, ptr null, i32 %1, i32 3)
  ret void
}
attributes #0 = { noinline nounwind optnone uwtable }
"""


def test_canonicalize_markers_passes_marker_addresses():
    out = canonicalize_markers(RAW)
    assert "@__enzyme_autodiff(ptr @f, ptr @enzyme_dup, ptr null, ptr null, ptr @enzyme_const, i32 3)" in out
    # the -O0 pair is dropped from attribute groups so -O0 code is optimized before AD
    assert "attributes #0 = { nounwind uwtable }" in out


def test_canonicalize_makes_prototyped_calls_variadic():
    text = RAW.replace("call double (ptr, ...) @__enzyme_autodiff", "call double @__enzyme_autodiff")
    assert "call double (ptr, ...) @__enzyme_autodiff(ptr @f, ptr @enzyme_dup" in canonicalize_markers(text)


def test_declared_markers_become_weak_definitions():
    assert _define_marker_global("@enzyme_dup = external global i32, align 4") == \
        "@enzyme_dup = weak global i32 0, align 4"
    assert _define_marker_global("@other = external global i32") == "@other = external global i32"


def test_derived_functions_are_named_and_shared(tmp_path):
    src = tmp_path / "two.c"
    src.write_text("""
#include <math.h>
double __enzyme_autodiff(void *, ...);
void *__enzyme_augmentfwd(void *, ...);
__attribute__((noinline)) double g(double x) { return sin(x) * x; }
double f(double x) { return g(x) * g(2 * x); }
int main(void) { void *t = __enzyme_augmentfwd((void *)f, 1.0);
  return (int)(__enzyme_autodiff((void *)f, 1.0) + __enzyme_autodiff((void *)f, 2.0)) + (t != 0); }
""")
    module = llvm.parse_assembly(frontend_ir(str(src), str(tmp_path)))
    out = run_ad_stage(module, keep_dir=str(tmp_path / "keep")).text()
    assert module.ref.closed     # consumed: its LLVM memory is not held while the engine runs
    defined = re.findall(r'^define internal [^@]*@([\w.$"]+)\(', out, re.M)
    assert defined.count("diffe_f") == 1            # two call sites, one derived function
    assert "augmented_f" in defined and "reverse_f" in defined
    assert defined.count("augmented_g") == 1 and defined.count("reverse_g") == 1
    assert os.path.exists(tmp_path / "keep" / "ad-input.ll")
    assert os.path.exists(tmp_path / "keep" / "ad-output.ll")
    assert not re.search(r'call [^\n]*@__enzyme_(autodiff|augmentfwd)\(', out)   # every call rewritten


def test_module_without_calls_is_unchanged_text():
    text = "define i32 @main() {\nbb:\n  ret i32 0\n}\n"
    assert differentiate_module(text) == text


def test_split_local_array_shadows_stay_in_the_reverse_piece(tmp_path):
    """A local float array handed to derived callees in split mode: the augmented pieces get
    poison for its shadow and the reverse piece allocates it (no heap block per call); an
    array whose callee returns the pointer keeps the heap shadow."""
    src = os.path.join(os.path.dirname(__file__), "programs", "split_kept.c")
    module = llvm.parse_assembly(frontend_ir(src, str(tmp_path)))
    out = run_ad_stage(module, keep_dir=str(tmp_path / "keep")).text()
    aug = re.search(r'^define internal double @augmented_locals\(.*?^}', out, re.M | re.S).group(0)
    rev = re.search(r'^define internal void @reverse_locals\(.*?^}', out, re.M | re.S).group(0)
    assert re.search(r'call void @augmented_rotate[.\w]*\(ptr [^,]+, ptr [^,]+, ptr [^,]+, ptr poison,', aug)
    assert re.search(r'call void @augmented_scale[.\w]*\(ptr [^,]+, ptr [^,]+, ptr [^,]+, ptr poison,', aug)
    assert aug.count("@calloc(") == 1           # only stash's array, whose pointer escapes
    assert len(re.findall(r'= alloca \[2 x double\]', rev)) == 2
    # the nested callee passes the promise on: scale's pieces hand rotate poison as well
    scale_aug = re.search(r'^define internal void @augmented_scale[.\w]*\(.*?^}', out, re.M | re.S).group(0)
    assert re.search(r'call void @augmented_rotate[.\w]*\(.*ptr poison,', scale_aug)
    llvm.verify(llvm.parse_assembly(out), generated=True)


def test_side_tables_only_where_iterations_repeat(tmp_path):
    """Values a top-level loop computes alike in every iteration go to the side table: in
    split mode w's loads in `sweeps` (combined mode reads w again instead), in both modes
    the loads of the buffer `updated` fills before its read-only loop; loops whose
    iterations differ keep everything on the tape."""
    src = os.path.join(os.path.dirname(__file__), "programs", "side_tables.c")
    module = llvm.parse_assembly(frontend_ir(src, str(tmp_path)))
    out = run_ad_stage(module, keep_dir=str(tmp_path / "keep")).text()

    def body(kind, name):
        return re.search(rf'^define internal \S+ @{kind}_{name}\(.*?^}}', out, re.M | re.S).group(0)

    assert body("augmented", "sweeps").count("@__enzyme_build_side_push(") >= 2
    for kind in ("augmented", "diffe"):
        for name in ("varying", "widening", "streamed"):
            assert "@__enzyme_build_side_push(" not in body(kind, name), (kind, name)
        updated = body(kind, "updated")
        # the first loop writes w: nothing in it is tabled; the second reads q and w only
        first_side = updated.index("@__enzyme_build_side_push(")
        assert updated.index("@exp(") < first_side or updated.index("llvm.exp") < first_side
    # the split pieces hand the side object over in the frame and the reverse piece frees its data
    rev = body("reverse", "sweeps")
    assert re.search(r'%"side\$" = alloca \[4 x i64\]', rev) and re.search(r'call void @free\(ptr %"sided\$', rev)
    assert '@__enzyme_build_tape_pop(ptr %"side$",' in rev
    llvm.verify(llvm.parse_assembly(out), generated=True)
