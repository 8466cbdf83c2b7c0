"""Reverse-mode conformance: workspace allocators (aligned_alloc, bump arenas,
posix_memalign, alignment through uintptr_t, byte buffers)."""
import os
import shutil
import subprocess

import pytest

from rev_helpers import ENZYME_BUILD, HCHECK, PROGRAMS, build_and_run


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_workspaces(tmp_path, opt):
    assert build_and_run(tmp_path, "workspaces.c", opt=opt) == 12


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_posix_memalign(tmp_path, opt):
    assert build_and_run(tmp_path, "posix_memalign.c", opt=opt) == 3


def test_uintptr_align(tmp_path):
    build_and_run(tmp_path, "uintptr_align.c")


@pytest.mark.parametrize("opt,env", [("-O0", {}), ("-O2", {}), ("-O2", {"ENZYME_BUILD_AD_BEFORE_OPT": "1"})],
                         ids=["O0", "O2", "ad-before-opt"])
def test_byte_buffer(tmp_path, opt, env):
    assert build_and_run(tmp_path, "byte_buffer.c", opt=opt, env_extra=env) == 4


def _build_refused(tmp_path, source, opt):
    """Build programs/<source> with -g; returns (exit code, stderr, output file exists)."""
    work = tmp_path / "refused"
    work.mkdir(exist_ok=True)
    shutil.copy(HCHECK, work)
    shutil.copy(os.path.join(PROGRAMS, source), work)
    build = subprocess.run([ENZYME_BUILD, "cc", opt, "-g", "-I.", source, "-o", "prog", "-lm"],
                           cwd=work, capture_output=True, text=True, timeout=240)
    return build.returncode, build.stderr, (work / "prog").exists()


# failure rev-23 (refused): memory reached through a pointer held in a global has no shadow
@pytest.mark.parametrize("opt", ["-O0", "-O2"])
@pytest.mark.parametrize("source,named", [("global_workspace.c", "the global 'g_work' (@g_work)"),
                                          ("static_workspace.c", "the static variable 'w' of f (@f.w)")])
def test_global_workspace_refused(tmp_path, source, named, opt):
    rc, err, made = _build_refused(tmp_path, source, opt)
    assert rc == 1 and not made, err
    assert f"{source}:9: an active value is stored through the pointer held in {named}" in err, err
    assert "pass the workspace to the differentiated function as a parameter" in err, err
    assert "declare a shadow pointer for it" in err, err
    assert "Traceback" not in err, err


# a pointer member of a struct global (split by LLVM into one global per member at -O2):
# named by the struct, and the hint does not offer a registration it cannot take
@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_struct_member_workspace_refused(tmp_path, opt):
    rc, err, made = _build_refused(tmp_path, "struct_workspace.c", opt)
    assert rc == 1 and not made, err
    assert "struct_workspace.c:15: an active value is stored through the pointer held in a pointer member " \
           "of the global 'M'" in err, err
    assert "keep the workspace pointer in a global of its own" in err, err
    assert "&2" not in err and "d_2" not in err and "Traceback" not in err, err


# the same workspace with a declared shadow pointer (registration global or attribute)
@pytest.mark.parametrize("opt,env", [("-O0", {}), ("-O2", {}), ("-O2", {"ENZYME_BUILD_AD_BEFORE_OPT": "1"})],
                         ids=["O0", "O2", "ad-before-opt"])
def test_global_workspace_with_declared_shadow(tmp_path, opt, env):
    assert build_and_run(tmp_path, "global_workspace_shadow.c", opt=opt, env_extra=env) == 12


@pytest.mark.parametrize("opt", ["-O1", "-O2"])
def test_byte_copy_loop(tmp_path, opt):
    assert build_and_run(tmp_path, "byte_copy_loop.c", opt=opt) == 4


@pytest.mark.parametrize("opt,env", [("-O0", {}),
                                     ("-O2", {"ENZYME_BUILD_AD_BEFORE_OPT": "1"})],
                         ids=["O0", "ad-before-opt"])
def test_byte_copy_loop_o0(tmp_path, opt, env):
    assert build_and_run(tmp_path, "byte_copy_loop.c", opt=opt, env_extra=env) == 4


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_int64_moves(tmp_path, opt):
    build_and_run(tmp_path, "int64_moves.c", opt=opt)


@pytest.mark.parametrize("opt,env", [("-O0", {}), ("-O2", {}),
                                     ("-O2", {"ENZYME_BUILD_AD_BEFORE_OPT": "1"})],
                         ids=["O0", "O2", "ad-before-opt"])
def test_dynarray(tmp_path, opt, env):
    assert build_and_run(tmp_path, "dynarray.c", opt=opt, env_extra=env) == 10


def test_libc_memcpy_builtin(tmp_path):
    assert build_and_run(tmp_path, "libc_memcpy.c") == 4


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
@pytest.mark.parametrize("extra", [["-fno-builtin"], ["-D_FORTIFY_SOURCE=2"], ["-D_FORTIFY_SOURCE=3"]],
                         ids=["no-builtin", "fortify", "fortify3"])
def test_libc_memcpy(tmp_path, extra, opt):
    """memcpy/memmove/memset as libc calls and as __mem*_chk mean the intrinsics."""
    assert build_and_run(tmp_path, "libc_memcpy.c", opt=opt, extra=extra) == 4


@pytest.mark.parametrize("program", ["logging.c", "misc.c"])
def test_fortify_printf(tmp_path, program):
    """__printf_chk and __vfprintf_chk are inactive like printf and vfprintf."""
    build_and_run(tmp_path, program, extra=["-D_FORTIFY_SOURCE=2"])


def test_global_workspace_shadow_in_vector_mode_is_refused(tmp_path):
    """A declared shadow pointer serves one lane: vector forward mode through it is an error
    naming the global (not a store through a null lane-1 shadow at run time)."""
    work = tmp_path / "vec"
    work.mkdir()
    (work / "v.c").write_text(r"""
#include <stdlib.h>
#include <enzyme/enzyme.h>
double *d_work;
double *g_work __attribute__((enzyme_shadow(d_work)));
double f(const double *x, int n) { for (int i = 0; i < n; i++) g_work[i] = x[i] * x[i];
  double s = 0; for (int i = 0; i < n; i++) s += g_work[i]; return s; }
typedef struct { double d[2]; } two;
two __enzyme_fwddiff2(void *, ...);
int main(void) {
  g_work = malloc(32); d_work = calloc(4, 8);
  double x[4] = {1, 2, 3, 4}, e0[4] = {1}, e1[4] = {0, 1};
  two r = __enzyme_fwddiff2((void *)f, enzyme_width, 2, enzyme_dup, x, e0, e1, enzyme_const, 4);
  return (int)r.d[0];
}
""")
    build = subprocess.run([ENZYME_BUILD, "cc", "-O2", "v.c", "-o", "v"], cwd=work, capture_output=True,
                           text=True, timeout=240)
    assert build.returncode == 1 and not (work / "v").exists(), build.stderr
    assert "reaches the pointer global @g_work" in build.stderr and "Traceback" not in build.stderr


# the same struct with its members set by main: the optimizer folds the stores to the
# shadowed array while the loads still come through the member, which has no shadow. The
# gradient was silently wrong (the path through the buffer dropped); now it is refused.
@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_struct_member_pointing_at_active_memory_refused(tmp_path, opt):
    rc, err, made = _build_refused(tmp_path, "struct_workspace_set_in_main.c", opt)
    assert rc == 1 and not made, err
    assert "floats are read through the pointer held in a pointer member of the global 'M'" in err, err
    assert "which the program points at @main.scratch, an array @f stores values computed from its inputs" \
        in err, err
    assert "Traceback" not in err, err
