"""Nested AD to any order (enzyme_build/ad/passes.py: level_tape_helpers; ad/tape.py).

The class: a derivative whose code keeps values on a tape (any loop whose values the
reverse sweep needs), differentiated again. Before, the second pass met the first
derivative's tape growth (realloc of cells of mixed types, a spare block in a global
without a shadow) and refused; only loop-free functions could be differentiated twice.
Each pass now hands its tape helpers to the next one as level-specific plain code whose
tape is reserved once and never moved, and the augmented pieces returning a pointer with
its shadow are inlined between passes. `nested_orders.c` checks up to fourth order,
reverse over reverse over reverse, forward over reverse over reverse, reverse over forward,
Hessian-vector products through a heap work array, and split mode inside a gradient.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ad_helpers import HERE, LEVELS

PROGRAM = os.path.join(HERE, "programs", "nested_orders.c")


@pytest.mark.parametrize("level", list(LEVELS))
def test_nested_orders(tmp_path, level):
    flags, env = LEVELS[level]
    exe = str(tmp_path / "nested")
    cli = os.path.join(os.path.dirname(sys.executable), "enzyme-build")
    r = subprocess.run([cli, "cc", *flags, "-I", os.path.dirname(PROGRAM), PROGRAM, "-o", exe, "-lm"],
                       capture_output=True, text=True, timeout=600, env={**os.environ, **env})
    assert r.returncode == 0, r.stderr
    out = subprocess.run([exe], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.startswith("ok "), out.stdout + out.stderr


def test_level_tape_helpers_ir(tmp_path):
    """The pass between nested passes: base helper definitions go, every call is renamed to
    the level's variant, the variants never touch the per-thread spare block or realloc,
    and a second application makes level 2 next to level 1."""
    from enzyme_build import llvm
    from enzyme_build.ad.passes import level_tape_helpers
    from enzyme_build.ad.tape import support_closure

    texts, decls = support_closure({"__enzyme_build_tape_push", "__enzyme_build_tape_pop",
                                    "__enzyme_build_tape_free_data", "__enzyme_build_tape_new"})
    from enzyme_build.ad.tape import DECLARATIONS
    body = """
define double @user(double %x) {
entry:
  %t = call ptr @__enzyme_build_tape_new()
  %c = call ptr @__enzyme_build_tape_push(ptr %t, i64 8)
  store double %x, ptr %c, align 8
  %r = call ptr @__enzyme_build_tape_pop(ptr %t, i64 8)
  %v = load double, ptr %r, align 8
  call void @__enzyme_build_tape_free_data(ptr %t)
  call void @free(ptr %t)
  ret double %v
}
"""
    text = body + "\n".join(DECLARATIONS[d] for d in sorted(decls)) + "\n" + "\n\n".join(texts) + "\n"
    llvm.verify(llvm.parse_assembly(text))
    once = level_tape_helpers(text)
    llvm.verify(llvm.parse_assembly(once))
    assert "@__enzyme_build_tape_push(" not in once and "@__enzyme_build_tape_push.n1(" in once
    user = once.split("define double @user", 1)[1].split("\n}\n", 1)[0]
    assert "@__enzyme_build_tape_push.n1(" in user and "@__enzyme_build_tape_free_data.n1(" in user
    grow = once.split("@__enzyme_build_tape_grow.n1(ptr %tape, i64 %need)", 1)[1].split("\n}\n", 1)[0]
    assert "@realloc" not in grow and "tape_spare" not in grow and "@__enzyme_build_cells_alloc" in grow
    # the next pass emits base helpers again; the next application makes them level 2
    # (as _differentiate_pass does, only what the module does not define yet: the spare global stays)
    twice = level_tape_helpers(once + "\n\n".join(t for t in texts if t.startswith("define")) + "\n")
    llvm.verify(llvm.parse_assembly(twice))
    assert "@__enzyme_build_tape_push.n2(" in twice and "@__enzyme_build_tape_push.n1(" in twice
    assert twice.count("define internal ptr @__enzyme_build_cells_alloc(") == 1
